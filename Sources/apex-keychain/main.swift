import CGlibc
import Foundation

// Secrets of the dumps are in this process's memory until they are written: no core file or backtracer may copy
// them, and memory freed after they are written is wiped. All before anything is read; the backtracer first, in
// each start (the restart that wipes freed memory runs this again).
ProcessHardening.disableBacktracer()
ProcessHardening.wipeFreedMemory()
ProcessHardening.disableCoreDumps()

// The tool runs once and exits. Memory it frees is kept for reuse instead of being handed back to the system and
// faulted in again page by page: a 100k-item run frees its parse tree just before it builds the items and the
// report. Allocations up to 32 MiB (the most glibc allows here) come from the heap, which is never trimmed and
// grows 64 MiB at a time. One heap for every thread: what the threads that parse and convert the pieces of a
// large dump free is reused by the next stage, instead of staying in their own heaps (20 MiB less at the peak
// of a 100k-item inspect, in the same time).
mallopt(M_MMAP_THRESHOLD, 32 << 20)
mallopt(M_TRIM_THRESHOLD, Int32.max)
mallopt(M_TOP_PAD, 64 << 20)
mallopt(M_ARENA_MAX, 1)

exit(await CommandLineTool.main(Array(CommandLine.arguments.dropFirst())).rawValue)
