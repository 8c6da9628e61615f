// glibc's process controls for the command-line tool: malloc tuning (mallopt), keeping secrets out of core dumps
// (prctl is variadic, which Swift can't call: it is wrapped here), and the default action of the crash signals.
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>

/// Makes the process not dumpable (no core file, no ptrace by other processes of the user) and sets its core
/// file size limit to 0. Returns 0, or -1 with errno set.
static inline int apex_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/// Gives the signals that the Swift runtime's backtracer catches at start-up (SIGQUIT, SIGABRT, SIGBUS, SIGFPE,
/// SIGILL, SIGSEGV, SIGTRAP) their default action again: each then ends the process at once, where the backtracer
/// would read its memory, offer to attach a debugger and turn the terminal's echo off while it waits. A signal
/// that is ignored (as a shell ignores SIGQUIT for a background job) stays ignored. Returns 0, or -1 with errno
/// set.
static inline int apex_default_crash_signals(void) {
    static const int signals[] = {SIGQUIT, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};
    for (size_t index = 0; index < sizeof signals / sizeof signals[0]; index++) {
        struct sigaction current;
        if (sigaction(signals[index], NULL, &current) != 0) return -1;
        if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
        struct sigaction fallback = {0};
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        if (sigaction(signals[index], &fallback, NULL) != 0) return -1;
    }
    return 0;
}
