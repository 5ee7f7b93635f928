import NIOCore
import ParsleyStorage
import PostgresNIO

/// A JSON document bound as `jsonb` (binary format: a version byte, then the text).
struct JSONBParameter: PostgresDynamicTypeEncodable {
    let text: String
    var psqlType: PostgresDataType { .jsonb }
    var psqlFormat: PostgresFormat { .binary }
    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeInteger(UInt8(1))
        byteBuffer.writeString(text)
    }
}

enum PostgresValues {
    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var b = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: b.appendNull()
            case .integer(let i): b.append(i)
            case .real(let d): b.append(d)
            case .text(let s): b.append(s)
            case .json(let s): b.append(JSONBParameter(text: s))
            }
        }
        return b
    }

    /// Largest integer a double holds exactly: integral numbers up to it come back as integers, like SQLite's.
    static let exactIntegerLimit = 9_007_199_254_740_992.0

    static func value(_ cell: PostgresCell) -> SQLValue {
        guard var bytes = cell.bytes else { return .null }
        if cell.format == .text {
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        }
        switch cell.dataType {
        case .int2: return bytes.readInteger(as: Int16.self).map { .integer(Int64($0)) } ?? .null
        case .int4: return bytes.readInteger(as: Int32.self).map { .integer(Int64($0)) } ?? .null
        case .int8: return bytes.readInteger(as: Int64.self).map { .integer($0) } ?? .null
        case .float8:
            guard let bits = bytes.readInteger(as: UInt64.self) else { return .null }
            return number(Double(bitPattern: bits))
        case .float4:
            guard let bits = bytes.readInteger(as: UInt32.self) else { return .null }
            return number(Double(Float(bitPattern: bits)))
        case .bool: return bytes.readInteger(as: UInt8.self).map { .integer($0 == 0 ? 0 : 1) } ?? .null
        case .jsonb:
            _ = bytes.readInteger(as: UInt8.self)
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        case .void: return .null
        case .numeric:
            if let s = try? cell.decode(String.self), let d = Double(s) { return number(d) }
            return .null
        default:
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        }
    }

    static func number(_ d: Double) -> SQLValue {
        if d == d.rounded(), abs(d) < exactIntegerLimit { return .integer(Int64(d)) }
        return .real(d)
    }
}
