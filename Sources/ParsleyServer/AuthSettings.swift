import Foundation
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain

/// Parse Server's `auth` option (`PARSE_SERVER_AUTH_PROVIDERS`, `--auth`, config key `auth`): JSON, or the path of a
/// JSON file, with one object per provider. A provider configured so that it would accept tokens it should not (no
/// `clientId`, an OpenID Connect provider without issuer or keys) stops the start; a provider Parsley does not have is
/// reported and its log-ins answer 252.
extension ServerSettings {
    static func authProviders(_ values: OptionValues, logger: Logger) throws -> [String: JSONValue] {
        guard let raw = values.raw("auth") else { return [:] }
        let name = OptionTable.spec("auth").shownName
        var option = raw.source.hasPrefix("config file") ? raw.json : (try? JSONParser.parse(raw.text)) ?? .string(raw.text)
        if case .string(let path) = option {
            guard let data = FileManager.default.contents(atPath: path), let value = try? JSONParser.parse(String(decoding: data, as: UTF8.self))
            else {
                // Not shown: a mistyped JSON option (secrets and all) would otherwise be printed as the "path".
                throw Invalid(description: "\(name) must be JSON or the path of a readable JSON file")
            }
            option = value
        }
        guard case .object(let auth) = option else { throw Invalid(description: "\(name) must be a JSON object, not \(OptionValues.kind(option))") }
        let parsed = AuthOption(auth)
        if !parsed.problems.isEmpty { throw Invalid(description: "\(name): " + parsed.problems.joined(separator: "; ")) }
        for warning in parsed.warnings { logger.warning("Parse Server option auth (\(raw.name)): \(warning)") }
        return auth
    }
}
