#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif
public import NIOCore
import NIOPosix
import ParsleyCore
public import ParsleyDomain

/// Files in a folder: `<root>/<name>` holds the bytes, `<root>/.meta/<name>` the content type and metadata,
/// and uploads in progress live in `<root>/.uploads` under random names until they are complete, synced and
/// renamed into place. Stored names never start with a dot, so neither folder can be reached by a name.
/// Disk calls run on NIO's thread pool, never on the threads serving requests.
public struct LocalFileStore: FileStore {
    public let root: String
    /// Bytes collected from the request before each write to the disk.
    static let writeChunk = 1 << 20
    /// Bytes read from the disk per chunk of a download.
    static let readChunk = 256 * 1024
    /// Uploads older than this found at start-up were interrupted by a crash.
    static let staleUploadMilliseconds: Int64 = 24 * 3600 * 1000

    public init(root: String) {
        var r = root
        while r.count > 1, r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    var uploads: String { root + "/.uploads" }
    var meta: String { root + "/.meta" }

    func path(_ name: String) throws -> String {
        guard FileNames.isValidStoredName(name) else { throw FileStoreError.invalidName }
        return root + "/" + name
    }

    public func prepare() async throws {
        let (root, uploads, meta) = (self.root, self.uploads, self.meta)
        try await Self.blocking {
            for dir in [root, uploads, meta] { try POSIX.makeDirectories(dir) }
            // Uploads a crash interrupted: old enough that no live request can still be writing them.
            let now = ContinuousClockEpoch.millisecondsSince1970()
            for entry in POSIX.list(uploads) {
                let p = uploads + "/" + entry
                if let modified = POSIX.modified(p), now - modified > Self.staleUploadMilliseconds { unlink(p) }
            }
        }
    }

    public func create(_ file: StoredFile, maxBytes: Int, next: () async throws -> ByteBuffer?) async throws -> StoredFile {
        let final = try path(file.name)
        let metaPath = meta + "/" + file.name
        let temp = uploads + "/" + FileNames.randomHex(12)
        let (root, uploads, meta) = (self.root, self.uploads, self.meta)
        let fd = try await Self.blocking { () throws -> Int32 in
            var fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0, errno == ENOENT {
                for dir in [root, uploads, meta] { try POSIX.makeDirectories(dir) }
                fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            }
            if fd < 0 { throw POSIX.error("open \(temp)") }
            return fd
        }
        var stored = file
        // One write to the disk runs (a child task) while the next megabyte arrives: at most two in memory. A child
        // still writing when an error leaves the loop is awaited before the cleanup closes the descriptor.
        do {
            var pending = ByteBuffer()
            pending.reserveCapacity(Self.writeChunk)
            var full: ByteBuffer?
            var size: Int64 = 0
            var ended = false
            while !ended {
                let toWrite = full
                async let written: Void = Self.write(toWrite, to: fd)
                ended = try await UploadPieces.fill(&pending, upTo: Self.writeChunk, size: &size, maxBytes: maxBytes, from: next)
                try await written
                if !ended {
                    full = pending
                    pending = ByteBuffer()
                    pending.reserveCapacity(Self.writeChunk)
                } else {
                    full = nil
                }
            }
            stored.size = size
            let rest = pending
            let attributes = ByteBuffer(bytes: JSONWriter.bytes(stored.attributes))
            try await Self.blocking {
                try POSIX.writeAll(fd, rest)
                guard fsync(fd) == 0 else { throw POSIX.error("fsync") }
                // Attributes first, then the bytes: the name appears only when both are in place.
                let metaTemp = temp + ".meta"
                let mfd = open(metaTemp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard mfd >= 0 else { throw POSIX.error("open \(metaTemp)") }
                defer { close(mfd) }
                try POSIX.writeAll(mfd, attributes)
                guard fsync(mfd) == 0, rename(metaTemp, metaPath) == 0 else { throw POSIX.error("meta \(metaPath)") }
                guard rename(temp, final) == 0 else { throw POSIX.error("rename \(final)") }
                close(fd)  // nothing below throws, so the cleanup never closes it twice
                POSIX.syncDirectory(root)
            }
        } catch {
            _ = try? await Self.blocking {
                close(fd)
                unlink(temp)
                unlink(temp + ".meta")
                unlink(metaPath)
            }
            throw error
        }
        return stored
    }

    public func info(_ name: String) async throws -> StoredFile? {
        guard FileNames.isValidStoredName(name) else { return nil }
        let (p, m) = (root + "/" + name, meta + "/" + name)
        return try await Self.blocking { () -> StoredFile? in
            var st = stat()
            guard stat(p, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            var file = StoredFile(name: name, size: Int64(st.st_size), createdAt: POSIX.modified(p) ?? 0)
            if let text = POSIX.readSmall(m), let json = try? JSONParser.parse(text) { file.read(attributes: json) }
            return file
        }
    }

    public func read(_ file: StoredFile, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        let p = try path(file.name)
        let fd = try await Self.blocking { () throws -> Int32 in
            let fd = open(p, O_RDONLY | O_CLOEXEC)
            if fd < 0 { throw errno == ENOENT ? FileStoreError.vanished : POSIX.error("open") }
            return fd
        }
        // The next chunk is read from the disk (a child task) while the current one goes out: at most two in memory.
        // A read still running when `write` fails is awaited before the descriptor is closed.
        do {
            var offset = range.lowerBound
            var chunk = try await Self.readChunk(fd, at: offset, before: range.upperBound)
            while let current = chunk {
                if current.readableBytes == 0 { throw FileStoreError.vanished }  // truncated under us
                offset += Int64(current.readableBytes)
                let nextOffset = offset
                async let following = Self.readChunk(fd, at: nextOffset, before: range.upperBound)
                try await write(current)
                chunk = try await following
            }
        } catch {
            close(fd)
            throw error
        }
        close(fd)
    }

    /// Writes `buffer` (if any) at the descriptor's position, off the event loop.
    static func write(_ buffer: ByteBuffer?, to fd: Int32) async throws {
        guard let buffer else { return }
        try await blocking { try POSIX.writeAll(fd, buffer) }
    }

    /// Up to `readChunk` bytes from `offset`, never past `end`; nil once `offset` reached `end`.
    static func readChunk(_ fd: Int32, at offset: Int64, before end: Int64) async throws -> ByteBuffer? {
        guard offset < end else { return nil }
        let count = Int(min(Int64(readChunk), end - offset))
        return try await blocking { try POSIX.read(fd, count: count, at: offset) }
    }

    public func list(after: String?, limit: Int) async throws -> [String] {
        let root = self.root
        let all = try await Self.blocking { POSIX.list(root).filter { FileNames.isValidStoredName($0) } }
        let sorted = all.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let start = after.map { a in sorted.firstIndex { a.utf8.lexicographicallyPrecedes($0.utf8) } ?? sorted.endIndex } ?? 0
        return Array(sorted[start...].prefix(limit))
    }

    public func delete(_ name: String) async throws -> Bool {
        let p = try path(name)
        let m = meta + "/" + name
        return try await Self.blocking {
            guard unlink(p) == 0 else {
                if errno == ENOENT { return false }
                throw POSIX.error("unlink")
            }
            unlink(m)
            return true
        }
    }

    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}

/// The few system calls the local store needs.
enum POSIX {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func error(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }

    static func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0, errno != EEXIST { throw error("mkdir \(current)") }
        }
    }

    static func writeAll(_ fd: Int32, _ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw error("write")
                }
                done += n
            }
        }
    }

    static func read(_ fd: Int32, count: Int, at offset: Int64) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        var failed = false
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            var done = 0
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0, errno == EINTR { continue }
                if n < 0 { failed = true }
                if n <= 0 { break }
                done += n
            }
            return done
        }
        if failed { throw error("read") }
        return buffer
    }

    static func readSmall(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let buffer = try? read(fd, count: 1 << 20, at: 0) else { return nil }
        return String(buffer: buffer)
    }

    static func modified(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000
    }

    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { ptr in
                ptr.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Makes a rename durable.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
