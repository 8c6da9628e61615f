// glibc's process controls for the command-line tool: malloc tuning (mallopt), and keeping secrets out of core
// dumps (prctl is variadic, which Swift can't call: it is wrapped here).
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/resource.h>

/// Makes the process not dumpable (no core file, no ptrace by other processes of the user) and sets its core
/// file size limit to 0. Returns 0, or -1 with errno set.
static inline int apex_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
