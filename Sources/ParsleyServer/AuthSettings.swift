import Foundation
import Logging
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain

/// Parse Server's `auth` option (`PARSE_SERVER_AUTH_PROVIDERS`, `--auth`, config key `auth`): JSON, or the path of a
/// JSON file, with one object per provider. A provider configured so that it would accept tokens it should not, or
/// could check none (no `clientId`, an OpenID Connect provider without issuer or keys, Facebook without `appIds` or
/// `clientId`, an `oauth2` provider without its introspection endpoint) stops the start; a provider Parsley does not
/// have is reported and its log-ins answer 252.
extension ServerSettings {
    static func authProviders(_ values: OptionValues, logger: Logger) throws -> [String: JSONValue] {
        guard let (option, raw) = try values.jsonOrFile("auth") else { return [:] }
        let name = OptionTable.spec("auth").shownName
        guard case .object(let auth) = option else { throw Invalid(description: "\(name) must be a JSON object, not \(OptionValues.kind(option))") }
        let parsed = AuthOption(auth)
        if !parsed.problems.isEmpty { throw Invalid(description: "\(name): " + parsed.problems.joined(separator: "; ")) }
        for warning in parsed.warnings { logger.warning("Parse Server option auth (\(raw.name)): \(warning)") }
        return auth
    }
}
