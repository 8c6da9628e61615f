/// Waits until `condition` holds, polling every millisecond; false if it still doesn't after ten minutes.
///
/// A healthy run takes milliseconds. The limit is only there so that a hang ends as a failure instead of stopping
/// the suite: it is far beyond anything a loaded machine needs, since tests run in parallel on two cores and a
/// task can wait minutes for a thread. The condition is checked once more after the limit, for a task that was
/// held up while its condition came true.
public func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(600)
    while await !condition() {
        if ContinuousClock.now > deadline { return await condition() }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
