import Foundation

/// Runs blocking work (a child process to its end, a blocking socket read) on a thread of its own.
///
/// Never on the task's thread nor on `DispatchQueue.global()`: on Linux both are the threads that run every
/// test's tasks (two on a 2-core machine), and a blocked one stalls every other test in the process. A 200 ms
/// statement timeout once took 6.9 s in CI because `python3 -c 'import moto'` and openssl were waited for there.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// `spawnAndWait` from async code: the same command and exit status, without holding a task's thread.
func spawned(_ arguments: [String], output: String = "/dev/null") async -> Int32 {
    (try? await offThread { spawnAndWait(arguments, output: output) }) ?? -1
}
