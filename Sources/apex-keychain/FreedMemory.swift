import CGlibc

/// Handing memory a stage has freed back to the system before the next stage allocates its own.
enum FreedMemory {
    /// Returns the allocator's free pages to the system (`malloc_trim`). glibc keeps what a stage frees for later
    /// allocations, and a report's item array is one allocation too large to reuse it: without this, the peak of
    /// a dry run was what reading and planning left resident plus the report, not the larger of the two.
    static func returnToSystem() {
        _ = malloc_trim(0)
    }
}
