import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// What Parse Dashboard relies on: `/serverInfo` features that never claim more than works (each true flag is
/// exercised here, and a flag without an exercise fails the test), `/push_audiences`, `/security`.
@Suite("Parse Dashboard's contract")
struct ParseDashboardTests {
    /// Exercises the feature a `/serverInfo` flag names; throws or records an issue when it does not work.
    typealias Exercise = @Sendable (ParseClient) async throws -> Void

    static let exercises: [String: Exercise] = [
        "globalConfig.create": { (p: ParseClient) async throws in
            #expect(try await p.request(.put, "/config", ["params": ["flagA": 1]]).status == 200)
        },
        "globalConfig.read": { (p: ParseClient) async throws in #expect(try await p.request(.get, "/config")["params"]?["flagA"] == 1) },
        "globalConfig.update": { (p: ParseClient) async throws in
            _ = try await p.request(.put, "/config", ["params": ["flagA": 2], "masterKeyOnly": ["flagA": true]])
            #expect(try await p.request(.get, "/config")["params"]?["flagA"] == 2)
        },
        "globalConfig.delete": { (p: ParseClient) async throws in
            _ = try await p.request(.put, "/config", ["params": ["flagA": ["__op": "Delete"]]])
            #expect(try await p.request(.get, "/config")["params"]?["flagA"] == nil)
        },
        "hooks.create": { (p: ParseClient) async throws in
            #expect(try await p.request(.post, "/hooks/functions", ["functionName": "f", "url": "https://example.com/f"]).status == 200)
        },
        "hooks.read": { (p: ParseClient) async throws in #expect(try await p.request(.get, "/hooks/functions").json.arrayValue?.count == 1) },
        "hooks.update": { (p: ParseClient) async throws in
            #expect(try await p.request(.put, "/hooks/functions/f", ["url": "https://example.com/g"])["url"] == "https://example.com/g")
        },
        "hooks.delete": { (p: ParseClient) async throws in
            _ = try await p.request(.put, "/hooks/functions/f", ["__op": "Delete"])
            #expect(try await p.request(.get, "/hooks/functions").json.arrayValue?.isEmpty == true)
        },
        "cloudCode.jobs": { (p: ParseClient) async throws in
            let data = try await p.request(.get, "/cloud_code/jobs/data")
            #expect(data["jobs"]?.arrayValue != nil && data["in_use"]?.arrayValue != nil, "\(data.json)")
        },
        "logs.level": { (p: ParseClient) async throws in #expect(try await p.request(.get, "/scriptlog?level=error").json.arrayValue != nil) },
        "logs.size": { (p: ParseClient) async throws in #expect(try await p.request(.get, "/scriptlog?size=5").json.arrayValue != nil) },
        "logs.order": { (p: ParseClient) async throws in #expect(try await p.request(.get, "/scriptlog?order=asc").json.arrayValue != nil) },
        "logs.until": { (p: ParseClient) async throws in
            #expect(try await p.request(.get, "/scriptlog?until=2000-01-01T00:00:00.000Z").json.arrayValue?.isEmpty == true)
        },
        "logs.from": { (p: ParseClient) async throws in
            #expect(try await p.request(.get, "/scriptlog?from=2100-01-01T00:00:00.000Z").json.arrayValue?.isEmpty == true)
        },
        "push.pushAudiences": { (p: ParseClient) async throws in
            let created = try await p.request(.post, "/push_audiences", ["name": "iOS", "query": #"{"deviceType":"ios"}"#])
            #expect(created.status == 201)
            let list = try await p.request(.get, "/push_audiences")
            #expect(list.results.first?["query"] == ["deviceType": "ios"])
        },
        "schemas.addField": { (p: ParseClient) async throws in
            #expect(try await p.request(.put, "/schemas/Dash", ["fields": ["b": ["type": "Number"]]]).status == 200)
        },
        "schemas.removeField": { (p: ParseClient) async throws in
            #expect(try await p.request(.put, "/schemas/Dash", ["fields": ["b": ["__op": "Delete"]]]).status == 200)
        },
        "schemas.addClass": { (p: ParseClient) async throws in
            #expect(try await p.request(.post, "/schemas/Dash2", ["className": "Dash2"]).status == 200)
        },
        "schemas.removeClass": { (p: ParseClient) async throws in #expect(try await p.request(.delete, "/schemas/Dash2").status == 200) },
        "schemas.clearAllDataFromClass": { (p: ParseClient) async throws in
            _ = try await p.createId("Dash", ["a": 1])
            #expect(try await p.request(.delete, "/purge/Dash").status == 200)
            #expect(try await p.total("Dash") == 0)
        },
        "schemas.editClassLevelPermissions": { (p: ParseClient) async throws in try await p.setCLP("Dash", ["find": ["*": true], "get": ["*": true]])
        },
        "schemas.editPointerPermissions": { (p: ParseClient) async throws in
            _ = try await p.request(.put, "/schemas/Dash", ["fields": ["owner": ["type": "Pointer", "targetClass": "_User"]]])
            try await p.setCLP("Dash", ["readUserFields": ["owner"]])
            #expect(try await p.request(.get, "/schemas/Dash")["classLevelPermissions"]?["readUserFields"] == ["owner"])
        },
        "settings.securityCheck": { (p: ParseClient) async throws in
            #expect(try await p.request(.get, "/security")["report"]?["groups"]?.arrayValue?.isEmpty == false)
        },
    ]

    /// The true flags of `/serverInfo`, as `group.name`.
    static func trueFlags(_ info: Reply) -> [String] {
        var out: [String] = []
        for (group, flags) in info["features"]?.objectValue ?? [:] {
            for (name, value) in flags.objectValue ?? [:] where value == true { out.append("\(group).\(name)") }
        }
        return out.sorted()
    }

    @Test("every true /serverInfo feature works (each is exercised), with and without the security check", arguments: Backend.all, [false, true])
    func serverInfoTellsTheTruth(_ backend: Backend, _ securityCheck: Bool) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.security.enableCheck = securityCheck }) { p in
            _ = try await p.createId("Dash", ["a": 1])
            let info = try await p.request(.get, "/serverInfo")
            #expect(info["parseServerVersion"]?.stringValue?.hasPrefix("9.") == true)
            let flags = Self.trueFlags(info)
            #expect(flags.contains("globalConfig.read") && flags.contains("logs.level") && flags.contains("push.pushAudiences"))
            #expect(flags.contains("settings.securityCheck") == securityCheck)
            // In a fixed order (create before read, and so on).
            for flag in Self.exercises.keys.sorted(by: Self.order) where flags.contains(flag) {
                try await Self.exercises[flag]!(p)
            }
            for flag in flags where Self.exercises[flag] == nil { Issue.record("/serverInfo says \(flag) but nothing here exercises it") }
            // Push is off without a provider (its flags false), and /push says so.
            #expect(!flags.contains("push.immediatePush"))
            #expect(try await p.request(.post, "/push", ["channels": ["a"], "data": ["alert": "x"]]).code == 115)
            if !securityCheck { #expect(try await p.request(.get, "/security").status == 409) }
        }
    }

    static func order(_ a: String, _ b: String) -> Bool {
        let rank = ["create": 0, "read": 1, "update": 2, "delete": 3, "addClass": 0, "addField": 1, "removeField": 2]
        let (ga, na) = (a.split(separator: ".")[0], String(a.split(separator: ".")[1]))
        let (gb, nb) = (b.split(separator: ".")[0], String(b.split(separator: ".")[1]))
        if ga != gb { return ga < gb }
        return (rank[na] ?? 5, na) < (rank[nb] ?? 5, nb)
    }

    @Test("/push_audiences: create, list, get, update, delete with the query as an object; master key only", arguments: Backend.all)
    func pushAudiences(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let created = try await p.request(.post, "/push_audiences", ["name": "Android", "query": ["deviceType": "android"]])
            #expect(created.status == 201)
            let id = try #require(created["objectId"]?.stringValue)
            #expect(try await p.request(.get, "/push_audiences/\(id)")["query"] == ["deviceType": "android"])
            #expect(try await p.request(.put, "/push_audiences/\(id)", ["name": "Droids"]).status == 200)
            let listed = try await p.request(.get, "/push_audiences")
            #expect(listed.results.map { $0["name"] } == ["Droids"])
            #expect(try await p.request(.post, "/push_audiences", ["name": "Bad", "query": "not json"]).code == 107)
            #expect(try await p.request(.get, "/push_audiences", master: false).status == 403)
            #expect(try await p.request(.delete, "/push_audiences/\(id)").status == 200)
            #expect(try await p.request(.get, "/push_audiences").results.isEmpty)
        }
    }

    @Test("/security: Parse Server's report; a weak master key, client class creation and public uploads fail their checks")
    func securityReport() async throws {
        let options = TestServer.options {
            $0.security.enableCheck = true
            $0.allowClientClassCreation = true
            $0.files.upload.enableForPublic = true
        }
        try await TestServer.with(backend: .sqlite, options) { p in
            let report = try #require(try await p.request(.get, "/security")["report"])
            #expect(report["state"] == "fail")
            let checks = report["groups"]?.arrayValue?.first?["checks"]?.arrayValue ?? []
            let failed = Set(checks.filter { $0["state"] == "fail" }.compactMap { $0["title"]?.stringValue })
            #expect(failed == ["Secure master key", "Client class creation disabled", "Public file upload disabled"])
            #expect(checks.allSatisfy { $0["warning"]?.stringValue != nil && $0["solution"]?.stringValue != nil })
            #expect(try await p.request(.get, "/security", master: false).status == 403)
        }
    }
}
