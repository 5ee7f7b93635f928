import Foundation
import ParsleyCore
import ParsleyGraphQL

/// A `multipart/form-data` body (RFC 7578) split into its parts: each part's field name, file name, content type and
/// bytes. Used by the GraphQL endpoint for the GraphQL multipart request spec (`operations`, `map`, the files).
struct MultipartForm {
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes: ArraySlice<UInt8>
    }

    var parts: [Part] = []

    /// The boundary of a `multipart/form-data; boundary=...` content type (nil: not a multipart form).
    static func boundary(_ contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Splits `body`; nil when it is not a well-formed form with this boundary.
    init?(_ body: [UInt8], boundary: String) {
        let delimiter = Array(("--" + boundary).utf8)
        guard var start = Self.find(delimiter, in: body, from: 0) else { return nil }
        while true {
            var cursor = start + delimiter.count
            // `--` after the delimiter closes the form.
            if cursor + 1 < body.count, body[cursor] == 45, body[cursor + 1] == 45 { return }
            guard cursor + 1 < body.count, body[cursor] == 13, body[cursor + 1] == 10 else { return nil }
            cursor += 2
            guard let headerEnd = Self.find([13, 10, 13, 10], in: body, from: cursor) else { return nil }
            guard let next = Self.find([13, 10] + delimiter, in: body, from: headerEnd + 4) else { return nil }
            guard var part = Self.part(headers: String(decoding: body[cursor..<headerEnd], as: UTF8.self)) else { return nil }
            part.bytes = body[(headerEnd + 4)..<next]
            parts.append(part)
            start = next + 2
        }
    }

    /// A part's `Content-Disposition` (name, file name) and `Content-Type`.
    static func part(headers: String) -> Part? {
        var part = Part(name: "", bytes: [])
        var named = false
        for line in headers.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let header = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if header == "content-type" { part.contentType = value }
            guard header == "content-disposition" else { continue }
            for parameter in value.split(separator: ";").dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                var text = pair[1]
                if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
                switch pair[0].lowercased() {
                case "name":
                    part.name = text
                    named = true
                case "filename": part.filename = text
                default: break
                }
            }
        }
        return named ? part : nil
    }

    /// The first index of `needle` in `haystack` at or after `from`.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var i = from
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// The GraphQL multipart request spec: `operations` (one operation's JSON), `map` (`{"<key>": ["variables.x", ...]}`)
    /// and the files named by the keys. Answers the operation with each file's marker where `map` puts it, and the
    /// files by key; a malformed request is a `GraphQLMultipartError` (400).
    func graphQLRequest() throws -> (body: JSONValue, uploads: [String: GraphQLUpload]) {
        guard let operationsPart = parts.first(where: { $0.name == "operations" }),
            let operations = try? JSONParser.parse(operationsPart.bytes)
        else { throw GraphQLMultipartError("Invalid JSON in the 'operations' multipart field.") }
        guard case .object = operations else { throw GraphQLMultipartError("Batched operations are not supported.") }
        guard let mapPart = parts.first(where: { $0.name == "map" }),
            case .object(let map)? = try? JSONParser.parse(mapPart.bytes)
        else { throw GraphQLMultipartError("Invalid JSON in the 'map' multipart field.") }
        var body = operations
        var uploads: [String: GraphQLUpload] = [:]
        for (key, paths) in map {
            guard let file = parts.first(where: { $0.name == key }) else { throw GraphQLMultipartError("File missing in the request.") }
            uploads[key] = GraphQLUpload(filename: file.filename ?? key, contentType: file.contentType, bytes: Array(file.bytes))
            for path in paths.arrayValue ?? [] {
                guard let path = path.stringValue, Self.set(&body, path.split(separator: ".").map(String.init)[...], GraphQLUpload.marker(key))
                else { throw GraphQLMultipartError("Invalid object path for the 'map' multipart field entry key '\(key)'.") }
            }
        }
        return (body, uploads)
    }

    /// Sets the value at a dotted path (`variables.input.upload`, `variables.files.0`); false when it leads nowhere.
    static func set(_ value: inout JSONValue, _ path: ArraySlice<String>, _ new: JSONValue) -> Bool {
        guard let key = path.first else {
            value = new
            return true
        }
        switch value {
        case .object(var object):
            var child = object[key] ?? .null
            if path.count > 1, child == .null { return false }
            guard set(&child, path.dropFirst(), new) else { return false }
            object[key] = child
            value = .object(object)
            return true
        case .array(var array):
            guard let index = Int(key), array.indices.contains(index) else { return false }
            guard set(&array[index], path.dropFirst(), new) else { return false }
            value = .array(array)
            return true
        default:
            return false
        }
    }
}

/// A multipart GraphQL request that does not follow the spec.
struct GraphQLMultipartError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
