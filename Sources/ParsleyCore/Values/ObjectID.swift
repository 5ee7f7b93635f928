/// Generates Parse object ids: 10 characters from `[A-Za-z0-9]`, from the system's secure random source.
public enum ObjectID {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    public static func make(length: Int = 10) -> String {
        var rng = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: length)
        for i in 0..<length {
            bytes[i] = alphabet[Int(rng.next(upperBound: UInt32(alphabet.count)))]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A random token of `length` lowercase hex digits (session tokens, keys).
    public static func hexToken(length: Int = 32) -> String {
        var rng = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: (0..<length).map { _ in hex[Int(rng.next(upperBound: UInt32(16)))] }, as: UTF8.self)
    }
}
