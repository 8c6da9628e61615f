// glibc's malloc tuning (mallopt), for the command-line tool.
#include <malloc.h>
