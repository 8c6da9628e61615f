#ifndef APEX_CSODIUM_SHIM_H
#define APEX_CSODIUM_SHIM_H
#include <sodium.h>
#endif
