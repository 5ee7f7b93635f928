import Foundation

extension Process {
    /// Waits for the process to end without blocking a thread. `waitUntilExit()` blocks its thread until
    /// Foundation's exit notification runs on a dispatch queue; with tests running in parallel on a 2-core machine,
    /// two such waits can take every thread of the shared pool and the notification never runs.
    func exited(killAfter limit: Duration = .seconds(10)) async {
        let deadline = ContinuousClock.now + limit
        while isRunning {
            if ContinuousClock.now > deadline {
                kill(processIdentifier, SIGKILL)
                return
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

private let launchLock = NSLock()

extension Process {
    /// `run()` one process at a time: Foundation's process launch on Linux is not safe to call from several
    /// threads at once (parallel tests that start processes crashed inside `Process.run()`).
    func launchSerially() throws {
        launchLock.lock()
        defer { launchLock.unlock() }
        try run()
    }
}
