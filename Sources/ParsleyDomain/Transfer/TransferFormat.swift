public import ParsleyCore
import ParsleyStorage

/// `parsley export` / `parsley import`: a whole Parsley database as JSON lines, one self-contained JSON value a
/// line, so it can be written and read with bounded memory and moved between backends (SQLite ⇄ PostgreSQL).
///
///     {"parsley":"export","version":1}
///     {"schema":{...}}                                        the class's schema as stored in _SCHEMA
///     {"class":"X","object":{"objectId":..,"createdAt":..,"updatedAt":..,"_rperm":[..],"_wperm":[..],...}}
///     {"relation":{"owner":"X","field":"f","owningId":"..","relatedId":".."}}
///     ... (schema, objects and relations for each class, by class name)
///     {"config":{"params":{..},"masterKeyOnly":{..}}}         /config parameters, when there are any
///     {"file":{"name":..,"contentType":..,"size":N,"createdAt":ms,"base64":..}}   with --files
///     {"fileData":{"name":..,"base64":..}}                    further 768 KiB chunks of a large file
///     {"end":true,"objects":N,"relations":R,"files":F}
///
/// Objects hold every stored column in Parse's JSON encoding, internal `_` fields included (password hashes,
/// tokens, lockout counters), and the raw permission lists (`_rperm`/`_wperm`, absent when NULL: public).
public enum TransferFormat {
    public static let version = 1
    public static let header: JSONValue = ["parsley": "export", "version": .int(Int64(version))]
    /// Raw bytes of file data a line carries (base64 makes it 1 MiB of text).
    public static let fileChunkBytes = 768 * 1024
    /// The columns every class table has, before its fields.
    static let systemColumns = ["objectId", "createdAt", "updatedAt", "_rperm", "_wperm"]

    static func line(_ value: JSONValue) -> String { JSONWriter.string(value) }

    static func permissions(_ value: SQLValue) -> JSONValue? {
        guard let text = value.text, case .array(let items)? = try? JSONParser.parse(text) else { return nil }
        return .array(items.filter { $0.stringValue != nil })
    }

    static func permissionValue(_ value: JSONValue?) -> SQLValue {
        guard case .array(let items)? = value else { return .null }
        return .json(JSONWriter.string(.array(items.filter { $0.stringValue != nil })))
    }

    /// Names of the files a value refers to (`{"__type":"File","name":..}`), nested ones too.
    static func fileNames(in value: JSONValue, into names: inout Set<String>) {
        switch value {
        case .object(let o):
            if o["__type"]?.stringValue == "File", let name = o["name"]?.stringValue {
                names.insert(name)
                return
            }
            for v in o.values { fileNames(in: v, into: &names) }
        case .array(let a):
            for v in a { fileNames(in: v, into: &names) }
        default: break
        }
    }
}

/// What an export wrote or an import read.
public struct TransferSummary: Sendable, Equatable, CustomStringConvertible {
    public var classes = 0
    public var objects = 0
    public var relations = 0
    public var files = 0
    /// File lines an import skipped because it had no file store.
    public var skippedFiles = 0

    public init() {}

    public var description: String {
        var text = "\(classes) classes, \(objects) objects, \(relations) relations, \(files) files"
        if skippedFiles > 0 { text += " (\(skippedFiles) files skipped: no file store)" }
        return text
    }
}

/// Why an export or import stopped; the message names the line and what to do.
public struct TransferError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
