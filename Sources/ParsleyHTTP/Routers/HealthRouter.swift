import ParsleyCore
import ParsleyDomain

/// `/health` (no credentials) and `/serverInfo` (master key).
struct HealthRouter: ParseRouter {
    static let version = "9.10.0"
    private var table = RouteTable()

    /// `pushConfigured`: a push provider is configured (the push features are then on); `securityCheck`:
    /// `GET /security` answers (`security.enableCheck`). Each feature said true here has a test that uses it.
    init(pushConfigured: Bool = false, securityCheck: Bool = false) {
        let push = JSONValue.bool(pushConfigured)
        table.master(.get, "serverInfo") { req, _ in
            return .ok([
                "parseServerVersion": .string(Self.version),
                "features": [
                    "globalConfig": ["create": true, "read": true, "update": true, "delete": true],
                    "hooks": ["create": true, "read": true, "update": true, "delete": true],
                    "cloudCode": ["jobs": true],
                    "logs": ["level": true, "size": true, "order": true, "until": true, "from": true],
                    "push": ["immediatePush": push, "scheduledPush": push, "storedPushData": push, "pushAudiences": true, "localization": push],
                    "schemas": [
                        "addField": true, "removeField": true, "addClass": true, "removeClass": true, "clearAllDataFromClass": true,
                        "exportClass": false, "editClassLevelPermissions": true, "editPointerPermissions": true,
                    ],
                    "settings": ["securityCheck": .bool(securityCheck)],
                ],
            ])
        }
    }

    var routes: RouteTable { table }
}
