import CGlibc
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the tool does to its own process before it reads anything: the dumps' secrets are in its memory until
/// they are written, so a crash must not copy them into a core file, and memory the tool frees must not keep
/// them.
enum ProcessHardening {
    /// Whether `APEX_KEYCHAIN_CORE_DUMPS=1` asks to debug the tool itself: then it keeps core dumps and the
    /// Swift runtime's backtracer.
    static var debugging: Bool { ProcessInfo.processInfo.environment["APEX_KEYCHAIN_CORE_DUMPS"] == "1" }

    /// Turns core dumps off (and ptrace by other processes of the user), unless ``debugging``.
    static func disableCoreDumps() {
        guard !debugging else { return }
        _ = apex_disable_core_dumps()
    }

    /// Turns the Swift runtime's backtracer off, unless ``debugging``: the crash signals it catches (SIGQUIT,
    /// SIGSEGV, ...) get their default action back, and end the tool at once. The backtracer would read the memory
    /// of a process that holds decrypted values, offer on the terminal to attach a debugger to it, and keep the
    /// terminal's echo off while it waits (30 s). The runtime installs its handlers before `main` (unless
    /// `SWIFT_BACKTRACE` says not to); they are replaced first thing, in each start of the tool.
    static func disableBacktracer() {
        guard !debugging else { return }
        _ = apex_default_crash_signals()
    }

    /// glibc's allocator settings under which freed memory keeps no secret: every freed block is overwritten
    /// (`perturb`), and no block waits in a per-thread cache, where it would be kept as it was (`tcache_count=0`).
    static let wipingTunables = "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"

    /// Makes the allocator wipe what is freed, so a value dropped after it was written is gone from memory, not
    /// only unreferenced. glibc reads these settings when the process starts, so the tool starts itself once more
    /// with them (the same binary, arguments and descriptors). Returns only when they are in force, or when the
    /// restart failed (then freed memory is not wiped, and everything else works as before).
    static func wipeFreedMemory() {
        let existing = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]
        if let existing, existing.hasSuffix(wipingTunables) { return }
        let tunables = existing.map { $0.isEmpty ? wipingTunables : $0 + ":" + wipingTunables } ?? wipingTunables
        guard setenv("GLIBC_TUNABLES", tunables, 1) == 0 else { return }
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Still here: the restart failed. Leave the environment as it was.
        if let existing { setenv("GLIBC_TUNABLES", existing, 1) } else { unsetenv("GLIBC_TUNABLES") }
    }
}
