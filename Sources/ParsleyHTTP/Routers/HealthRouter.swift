import ParsleyCore
import ParsleyDomain

/// `/health` (no credentials) and `/serverInfo` (master key).
struct HealthRouter: ParseRouter {
    static let version = "7.4.0"
    private var table = RouteTable()

    /// `pushConfigured`: a push provider is configured (the push features are then on).
    init(pushConfigured: Bool = false) {
        let push = JSONValue.bool(pushConfigured)
        table.on(.get, "serverInfo") { req, _ in
            guard req.auth.isMaster else { throw AccessDenied.masterKeyRequired }
            return .ok([
                "parseServerVersion": .string(Self.version),
                "features": [
                    "globalConfig": ["create": false, "read": false, "update": false, "delete": false],
                    "hooks": ["create": true, "read": true, "update": true, "delete": true],
                    "cloudCode": ["jobs": true],
                    "logs": ["level": true, "size": true, "order": true, "until": true, "from": true],
                    "push": ["immediatePush": push, "scheduledPush": push, "storedPushData": push, "pushAudiences": false, "localization": push],
                    "schemas": [
                        "addField": true, "removeField": true, "addClass": true, "removeClass": true, "clearAllDataFromClass": true,
                        "exportClass": false, "editClassLevelPermissions": true, "editPointerPermissions": true,
                    ],
                    "settings": ["securityCheck": false],
                ],
            ])
        }
    }

    func handler(for request: ParseRequest) -> (@Sendable (ParseRequest) async throws -> ParseResponse)? {
        table.handler(for: request)
    }
}
