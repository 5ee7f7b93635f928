import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid; its output goes to a file.
///
/// Not Foundation's `Process`: on Linux it learns that a child ended through a `select()`-based socket manager,
/// which stops working once the test process has descriptors numbered 1024 or more (parallel test servers,
/// database pools), and then `isRunning` stays true forever; its launch also crashed when called from several
/// threads at once.
final class ChildProcess: @unchecked Sendable {
    let processIdentifier: pid_t
    /// Standard output and standard error, together.
    let outputFile: URL
    private let ownsOutputFile: Bool
    private let lock = NSLock()
    private var waitStatus: Int32?
    private var inputFD: Int32

    /// Starts `executable` with `arguments`. `environment` replaces the inherited one when given; `directory`
    /// is the working directory; with `keepInputOpen`, standard input is a pipe until `closeInput()` (else /dev/null).
    init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil,
        keepInputOpen: Bool = false, output: URL? = nil
    ) throws {
        outputFile = output ?? FileManager.default.temporaryDirectory.appendingPathComponent("parsley-child-\(UUID().uuidString).log")
        ownsOutputFile = output == nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        if keepInputOpen {
            guard pipe(&pipeFDs) == 0 else { throw Failure("pipe failed: errno \(errno)") }
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The child starts with no blocked signals and default handlers, whatever this process does with them.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // A working directory through env(1) (posix_spawn_file_actions_addchdir_np is not visible from Swift).
        let command = directory.map { ["/usr/bin/env", "-C", $0.path, executable] + arguments } ?? [executable] + arguments
        let argv = command.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in env { free(e) } }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, command[0], &actions, &attributes, argv, env)
        if keepInputOpen { close(pipeFDs[0]) }
        guard rc == 0 else {
            if keepInputOpen { close(pipeFDs[1]) }
            throw Failure("cannot start \(executable): error \(rc)")
        }
        processIdentifier = pid
        inputFD = keepInputOpen ? pipeFDs[1] : -1
    }

    deinit {
        if inputFD >= 0 { close(inputFD) }
        if isRunning {
            kill(processIdentifier, SIGKILL)
            _ = reap(blocking: true)
        }
        if ownsOutputFile { try? FileManager.default.removeItem(at: outputFile) }
    }

    /// Ends standard input (a child reading it to its end then sees end-of-file).
    func closeInput() {
        lock.lock()
        defer { lock.unlock() }
        if inputFD >= 0 {
            close(inputFD)
            inputFD = -1
        }
    }

    var isRunning: Bool { reap(blocking: false) == nil }

    /// The exit code, or 128 + the signal that ended it (-1 while running).
    var terminationStatus: Int32 {
        guard let status = reap(blocking: false) else { return -1 }
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Waits for the end without blocking a thread; SIGKILL after `limit`.
    func exited(killAfter limit: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + limit
        while isRunning {
            if ContinuousClock.now > deadline {
                kill(processIdentifier, SIGKILL)
                _ = reap(blocking: true)
                return
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Blocks this thread until the end (for synchronous callers such as an exit hook); the exit status.
    func waitUntilExit() -> Int32 {
        _ = reap(blocking: true)
        return terminationStatus
    }

    func signal(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// SIGKILL, then reaped.
    func killNow() {
        if isRunning { kill(processIdentifier, SIGKILL) }
        _ = reap(blocking: true)
    }

    /// Everything written to standard output and standard error so far.
    func outputText() -> String {
        (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
    }

    /// The wait status once ended (nil while running).
    private func reap(blocking: Bool) -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let waitStatus { return waitStatus }
        var status: Int32 = 0
        while true {
            let r = waitpid(processIdentifier, &status, blocking ? 0 : WNOHANG)
            if r == processIdentifier {
                waitStatus = status
                return status
            }
            if r == 0 { return nil }
            if errno == EINTR { continue }
            waitStatus = -1  // not our child any more (already reaped elsewhere)
            return -1
        }
    }

    /// Runs to the end (at most `limit`) and returns the exit code and the output.
    static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil,
        limit: Duration = .seconds(120)
    ) async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, directory: directory)
        await child.exited(killAfter: limit)
        return (child.terminationStatus, child.outputText())
    }
}
