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
        let fd = Self.socket(reuseAddress: true)
        guard fd >= 0 else { throw Failed(description: "socket() failed: errno \(errno)") }
        let port = Self.bind(fd, port: 0)
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

    /// A TCP socket, with `SO_REUSEADDR` when asked; negative when it could not be made.
    static func socket(reuseAddress: Bool = false) -> Int32 {
        #if canImport(Glibc)
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var one: Int32 = 1
        if fd >= 0, reuseAddress { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
        return fd
    }

    /// 127.0.0.1:`port` as a socket address.
    static func address(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Binds `fd` to 127.0.0.1:`port` (0: any free port): the port bound, or -1.
    static func bind(_ fd: Int32, port: Int) -> Int {
        var address = address(port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                #if canImport(Glibc)
                    Glibc.bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
                #else
                    Darwin.bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
                #endif
            }
        }
        return ok ? Int(UInt16(bigEndian: address.sin_port)) : -1
    }
}
