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
/// that moment). A server that binds with `SO_REUSEADDR` (moto's, Python's
/// `http.server`) can still listen on it while it is held, which is how a test brings a service "back".
final class ReservedPort: Sendable {
    let port: Int
    private let fd: Mutex<Int32>

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failed(description: "socket() failed: errno \(errno)") }
        var one: Int32 = 1
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok =
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
            && withUnsafeMutablePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
                }
            }
        guard ok else {
            let code = errno
            close(fd)
            throw Failed(description: "could not reserve a port: errno \(code)")
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
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
