import Foundation
import ParsleyCore

/// `parsley --config config.json`, `parsley config.json` (as `parse-server config.json`) or `PARSE_SERVER_CONFIG`:
/// a JSON object in Parse Server's format (`{"appId":"…","masterKey":"…","databaseURI":"…","port":1337}`). Keys
/// are looked up in `OptionTable` (Parse Server's keys and Parsley's own); flags and the environment win over
/// the file, and every value is checked like the variable of the same setting.
enum ConfigFile {
    /// The file's options by canonical key, and the keys that are no option.
    static func read(path: String) throws -> (values: [String: JSONValue], unknown: [String]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            // The path is not shown: a value that lost its flag (`--clientKey --masterKey s3cret`) would be taken for it.
            throw ServerSettings.Invalid(
                description: "PARSE_SERVER_CONFIG: cannot read the config file (--config, the path argument or PARSE_SERVER_CONFIG)")
        }
        guard case .object(let object)? = try? JSONParser.parse(String(decoding: data, as: UTF8.self)) else {
            throw ServerSettings.Invalid(description: "PARSE_SERVER_CONFIG: '\(path)' is not a JSON object")
        }
        var values: [String: JSONValue] = [:]
        var unknown: [String] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let spec = OptionTable.byKey[key] else {
                unknown.append(key)
                continue
            }
            // The canonical key wins over an alias (`appId` over `applicationId`).
            if key == spec.key || values[spec.key] == nil { values[spec.key] = value }
        }
        return (values, unknown)
    }
}
