import Foundation

/// Measures how long the test process's task threads keep a new task waiting (`PARSLEY_STALL_PROBE=<folder>`, set by
/// scripts/test-watchdog.sh). Every test's tasks share those threads (two on a 2-core machine), so a test that
/// computes for seconds without a suspension point holds back every timer and I/O continuation of the others: a
/// 0.5 s SMTP timeout once fired 19.5 s late, and a stuck upload's clean-up missed its minute.
///
/// A thread of its own starts a task every 100 ms. A task that waited more than a second is a line in
/// `<folder>/stalls.log`; past 1.5 s the states of the process's threads go to `stall-N.threads`, and with
/// `PARSLEY_STALL_PROBE_STACKS=N` the first N such stalls also get every thread's stack from gdb (`stall-N.gdb`),
/// which names the tests holding the threads.
enum StallProbe {
    static let started: Bool = {
        let environment = ProcessInfo.processInfo.environment
        guard let folder = environment["PARSLEY_STALL_PROBE"], !folder.isEmpty else { return false }
        let stacks = Int(environment["PARSLEY_STALL_PROBE_STACKS"] ?? "") ?? 0
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        Thread.detachNewThread { watch(folder, stacks: stacks) }
        return true
    }()

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }

    private static func watch(_ folder: String, stacks: Int) {
        var stalls = 0
        while true {
            let ran = Flag()
            let sent = Date()
            Task.detached { ran.set() }
            var described = false
            while !ran.isSet {
                usleep(20_000)
                if !described, Date().timeIntervalSince(sent) > 1.5 {
                    described = true
                    stalls += 1
                    describe(folder + "/stall-\(stalls)", since: sent, withStacks: stalls <= stacks)
                }
            }
            let waited = Date().timeIntervalSince(sent)
            if waited > 1 { append(String(format: "%@ a new task waited %.2f s\n", "\(sent)", waited), to: folder + "/stalls.log") }
            usleep(100_000)
        }
    }

    private static func describe(_ name: String, since: Date, withStacks: Bool) {
        let pid = getpid()
        try? "waiting since \(since)\n\(threadStates(pid))\n".write(toFile: name + ".threads", atomically: true, encoding: .utf8)
        if withStacks {
            spawnAndWait(
                ["/usr/bin/gdb", "-p", "\(pid)", "-batch", "-nx", "-ex", "set print frame-arguments none", "-ex", "thread apply all bt 40"],
                output: name + ".gdb")
        }
    }

    private static func append(_ line: String, to path: String) {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data(line.utf8))
        try? handle.close()
    }

    /// One line per thread: id, state (R running, S sleeping, D in the kernel), name, wait channel and system call.
    private static func threadStates(_ pid: Int32) -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.sorted().map { tid in
            let base = "/proc/\(pid)/task/\(tid)/"
            func read(_ file: String) -> String {
                ((try? String(contentsOfFile: base + file, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let state = read("stat").split(separator: ")").last?.split(separator: " ").first ?? "?"
            let call = read("syscall").split(separator: " ").first ?? ""
            return "\(tid) \(state) \(read("comm")) wchan=\(read("wchan")) syscall=\(call)"
        }.joined(separator: "\n")
    }
}
