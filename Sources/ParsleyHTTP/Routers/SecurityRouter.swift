import ParsleyCore
public import ParsleyDomain

/// `GET /security` (master key, with `security.enableCheck`): Parse Server's security check report, with the checks
/// that apply to Parsley. Without `enableCheck` it answers 409, as Parse Server does.
public struct SecurityRouter: ParseRouter {
    private var table = RouteTable()

    init(options: ParseServerOptions) {
        table.master(.get, "security") { req, _ in
            guard options.security.enableCheck else {
                return ParseResponse(
                    status: 409, body: ["code": 1, "error": "Enable Parse Server option `security.enableCheck` to run security check."])
            }
            return .ok(["report": Self.report(options)])
        }
    }

    var routes: RouteTable { table }

    struct Check {
        var title: String
        var warning: String
        var solution: String
        var passes: Bool
    }

    static func checks(_ options: ParseServerOptions) -> [(String, [Check])] {
        let key = options.masterKey
        let strongKey = key.count >= 14 && key.contains(where: \.isLetter) && key.contains(where: \.isNumber)
        return [
            (
                "Parse Server Configuration",
                [
                    Check(
                        title: "Secure master key", warning: "The Parse Server master key is insecure and vulnerable to brute force attacks.",
                        solution:
                            "Choose a longer and/or more complex master key with a combination of upper- and lowercase characters, numbers and "
                            + "special characters.",
                        passes: strongKey),
                    Check(
                        title: "Security log disabled", warning: "Security checks in logs may expose vulnerabilities to anyone with access to logs.",
                        solution: "Change Parse Server configuration to 'security.enableCheckLog: false'.", passes: !options.security.enableCheckLog),
                    Check(
                        title: "Client class creation disabled",
                        warning: "Attackers are allowed to create new classes without restriction and flood the database.",
                        solution: "Change Parse Server configuration to 'allowClientClassCreation: false'.", passes: !options.allowClientClassCreation
                    ),
                    Check(
                        title: "Users are created without public access",
                        warning:
                            "Users with public read access are exposed to anyone who knows their object IDs, or to anyone who can query the "
                            + "Parse.User class.",
                        solution: "Change Parse Server configuration to 'enforcePrivateUsers: true'.", passes: options.accounts.enforcePrivateUsers),
                    Check(
                        title: "Public file upload disabled",
                        warning: "Anyone can upload files, which may be used to host content or fill the storage.",
                        solution: "Change Parse Server configuration to 'fileUpload.enableForPublic: false'.",
                        passes: !options.files.upload.enableForPublic),
                    Check(
                        title: "Read-only master key differs from the master key",
                        warning: "The read-only master key grants full access when it equals the master key.",
                        solution: "Set a different 'readOnlyMasterKey'.", passes: options.readOnlyMasterKey != options.masterKey),
                ]
            )
        ]
    }

    /// The titles and warnings of the failed checks (logged at start with `security.enableCheckLog`).
    public static func failures(_ options: ParseServerOptions) -> [String] {
        checks(options).flatMap { $0.1 }.filter { !$0.passes }.map { "\($0.title): \($0.warning) \($0.solution)" }
    }

    static func report(_ options: ParseServerOptions) -> JSONValue {
        var groups: [JSONValue] = []
        var allPass = true
        for (name, checks) in checks(options) {
            let pass = checks.allSatisfy(\.passes)
            allPass = allPass && pass
            groups.append([
                "name": .string(name), "state": pass ? "success" : "fail",
                "checks": .array(
                    checks.map { c in
                        [
                            "title": .string(c.title), "state": c.passes ? "success" : "fail", "warning": .string(c.warning),
                            "solution": .string(c.solution),
                        ]
                    }),
            ])
        }
        return ["version": "1.0.0", "state": allPass ? "success" : "fail", "groups": .array(groups)]
    }
}
