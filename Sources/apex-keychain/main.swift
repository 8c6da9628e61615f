import CGlibc
import Foundation

// Secrets of the dumps are in this process's memory until they are written: a crash must not copy them into a
// core file, and another process of the user must not read them through ptrace. Set before anything is read;
// APEX_KEYCHAIN_CORE_DUMPS=1 keeps core dumps for debugging the tool itself.
if ProcessInfo.processInfo.environment["APEX_KEYCHAIN_CORE_DUMPS"] != "1" {
    _ = apex_disable_core_dumps()
}

// The tool runs once and exits. Memory it frees is kept for reuse instead of being handed back to the system and
// faulted in again page by page: a 100k-item run frees large buffers (the pieces of an XML plist and libxml2's
// copies of them) just before it builds the items and the report. Allocations up to 32 MiB (the most glibc
// allows here) come from the heap, which is never trimmed and grows 64 MiB at a time.
mallopt(M_MMAP_THRESHOLD, 32 << 20)
mallopt(M_TRIM_THRESHOLD, Int32.max)
mallopt(M_TOP_PAD, 64 << 20)

exit(await CommandLineTool.main(Array(CommandLine.arguments.dropFirst())).rawValue)
