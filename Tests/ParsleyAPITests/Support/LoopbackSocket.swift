#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plain TCP sockets on 127.0.0.1, for what the tests do below HTTP: hold a port (`ReservedPort`), listen without
/// answering, or connect to send what an HTTP client would not.
enum LoopbackSocket {
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

    /// Connects `fd` to 127.0.0.1:`port`: 0 when accepted, else the error number.
    static func connect(_ fd: Int32, port: Int) -> Int32 {
        var address = address(port)
        let result = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                #if canImport(Glibc)
                    Glibc.connect(fd, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                    Darwin.connect(fd, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        return result == 0 ? 0 : errno
    }
}
