#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where every log line of the process goes: a bounded in-memory buffer that a thread of its own writes to
/// standard output in batches (a `write(2)` every few milliseconds, not one per line). A request that logs only
/// copies its line into the buffer under a short lock; it never waits for the terminal, the pipe or the disk.
/// When the buffer is full (the output cannot keep up) lines are dropped and counted (`dropped`, exported as
/// `parsley_log_lines_dropped_total`) rather than slowing requests down. What is buffered is written at exit.
public final class LogSink: @unchecked Sendable {
    /// The process's sink (standard output).
    public static let shared = LogSink(descriptor: 1)

    /// Lines are taken in batches this far apart at most (a line waits at most about this long).
    static let batchInterval: UInt32 = 10_000  // microseconds
    /// Bytes kept waiting at most; more are dropped.
    let capacity: Int

    private let descriptor: Int32
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Held while bytes go out, so a flush at exit never overtakes a batch being written.
    private let output = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    // Guarded by `mutex`.
    private var pending: [UInt8] = []
    private var spare: [UInt8] = []
    private var droppedLines = 0
    private var writerStarted = false
    private var writing = false
    /// The text of the last second a line was stamped with (`LogText.appendTime`); used under the lock only.
    var timeCache: (second: Int, text: [UInt8]) = (-1, [])

    public init(descriptor: Int32, capacity: Int = 4 << 20) {
        self.descriptor = descriptor
        self.capacity = capacity
        pthread_mutex_init(mutex, nil)
        pthread_mutex_init(output, nil)
        pthread_cond_init(condition, nil)
        pending.reserveCapacity(64 << 10)
        spare.reserveCapacity(64 << 10)
    }

    /// Lines dropped because the output could not keep up, since the start.
    public var dropped: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return droppedLines
    }

    /// Appends one line: `render` writes its bytes (newline included) at the end of the buffer it is given, under
    /// the sink's lock, so it must be quick and must not log. Returns false when the line was dropped.
    @discardableResult
    public func append(_ render: (inout [UInt8], LogSink) -> Void) -> Bool {
        pthread_mutex_lock(mutex)
        if !writerStarted { startWriter() }
        let before = pending.count
        guard before < capacity else {
            droppedLines += 1
            pthread_mutex_unlock(mutex)
            return false
        }
        render(&pending, self)
        if pending.count > capacity {
            pending.removeSubrange(before...)
            droppedLines += 1
            pthread_mutex_unlock(mutex)
            return false
        }
        let wake = !writing
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_signal(condition) }
        return true
    }

    /// Appends `bytes` as they are (a whole line, newline included).
    @discardableResult
    public func append(bytes: some Sequence<UInt8>) -> Bool {
        append { buffer, _ in buffer.append(contentsOf: bytes) }
    }

    /// Writes out whatever is buffered now, on the calling thread (at exit, and for tests).
    public func flush() {
        pthread_mutex_lock(output)
        pthread_mutex_lock(mutex)
        var batch = pending
        pending.removeAll(keepingCapacity: true)
        pthread_mutex_unlock(mutex)
        writeAll(&batch)
        pthread_mutex_unlock(output)
    }

    private func startWriter() {
        writerStarted = true
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { raw in
                let sink = Unmanaged<LogSink>.fromOpaque(raw!).takeRetainedValue()
                sink.writerLoop()
                return nil
            }, me)
        pthread_detach(thread)
        if self === LogSink.shared { atexit { LogSink.shared.flush() } }
    }

    private func writerLoop() {
        while true {
            pthread_mutex_lock(output)
            pthread_mutex_lock(mutex)
            while pending.isEmpty {
                writing = false
                pthread_mutex_unlock(output)
                pthread_cond_wait(condition, mutex)
                // Keep the lock order (output, then mutex).
                pthread_mutex_unlock(mutex)
                pthread_mutex_lock(output)
                pthread_mutex_lock(mutex)
            }
            writing = true
            swap(&pending, &spare)
            pthread_mutex_unlock(mutex)
            writeAll(&spare)
            pthread_mutex_unlock(output)
            spare.removeAll(keepingCapacity: true)
            // Let the next lines gather into one write.
            usleep(Self.batchInterval)
        }
    }

    private func writeAll(_ bytes: inout [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0, errno == EINTR {
                    continue
                } else if n < 0, errno == EAGAIN {
                    usleep(1_000)
                } else {
                    return  // closed or broken output: nothing else to do with these lines
                }
            }
        }
    }
}
