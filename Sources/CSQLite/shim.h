#ifndef APEX_CSQLITE_SHIM_H
#define APEX_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
