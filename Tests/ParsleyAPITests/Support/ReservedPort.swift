#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// A TCP port on 127.0.0.1 held for one test: a socket bound to it (with `SO_REUSEADDR`) that never listens.
///
/// While it is held, a connection to the port is refused, and the kernel hands the port to no other socket
/// that binds port 0, so a parallel test's server cannot take it (a port found free and let go is free only at
/// that moment). A server that binds with `SO_REUSEADDR` (moto, PostgreSQL, Hummingbird's listeners) can still
/// listen on it while it is held, which is how a child process gets it and a test brings a service "back".
final class ReservedPort: Sendable {
    let port: Int
    private let fd: Mutex<Int32>

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        let fd = LoopbackSocket.socket(reuseAddress: true)
        guard fd >= 0 else { throw Failed(description: "socket() failed: errno \(errno)") }
        let port = LoopbackSocket.bind(fd, port: 0)
        guard port > 0 else {
            let code = errno
            close(fd)
            throw Failed(description: "could not reserve a port: errno \(code)")
        }
        self.port = port
        self.fd = Mutex(fd)
    }

    /// Lets the port go (also done when the reservation is dropped).
    func release() {
        fd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
