#ifndef APEX_CLIBXML2_SHIM_H
#define APEX_CLIBXML2_SHIM_H
/* libxml2 built with ICU exposes ICU types in its headers, and those clash with Foundation's own ICU
   in any module that imports both. The readers need no ICU type, so hide them before the other headers. */
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#endif
