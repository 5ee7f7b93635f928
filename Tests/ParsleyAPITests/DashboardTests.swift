import Foundation
import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// The embedded dashboard's server side over HTTP: its pages with a strict CSP, sign-in with the master key, the
/// read-only master key or an admin role's member, and the REST API authorized by the session cookie only together
/// with its CSRF token. (The pages themselves are driven in a real browser by Tests/browser.)
@Suite("Dashboard")
struct DashboardTests {
    static let readOnlyKey = "read-only-master-key"

    static func options(_ configure: (inout ParseServerOptions) -> Void = { _ in }) -> ParseServerOptions {
        TestServer.options {
            $0.readOnlyMasterKey = readOnlyKey
            $0.dashboard.adminRole = "Admins"
            configure(&$0)
        }
    }

    static func header(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }

    /// Signs in with `body`; the cookie (`name=value`) and the CSRF token.
    static func signIn(_ p: ParseClient, _ body: JSONValue, origin: String? = nil) async throws -> (reply: Reply, cookie: String?, csrf: String?) {
        var h = HTTPFields()
        h[.contentType] = "application/json"
        if let origin { h[.origin] = origin }
        let r = try await p.raw(.post, "/dashboard/api/login", body: JSONWriter.string(body), headers: h)
        let cookie = r.headers[.setCookie]?.split(separator: ";").first.map(String.init)
        return (r, cookie, r["csrfToken"]?.stringValue)
    }

    /// A REST call as the dashboard page makes it.
    static func call(_ p: ParseClient, _ method: HTTPRequest.Method, _ path: String, _ body: JSONValue? = nil, cookie: String?, csrf: String?)
        async throws -> Reply
    {
        var h = HTTPFields()
        h[header("X-Parse-Application-Id")] = TestServer.appId
        h[.contentType] = "application/json"
        if let cookie { h[.cookie] = cookie }
        if let csrf { h[header("X-Parsley-Dashboard-CSRF")] = csrf }
        return try await p.raw(method, "/parse" + path, body: body.map(JSONWriter.string), headers: h)
    }

    @Test("the pages come from the binary with a strict Content-Security-Policy and no framing", arguments: Backend.all)
    func pages(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let index = try await p.raw(.get, "/dashboard", headers: [:])
            #expect(index.status == 200)
            #expect(index.headers[.contentType]?.hasPrefix("text/html") == true)
            let csp = try #require(index.headers[Self.header("Content-Security-Policy")])
            #expect(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"))
            #expect(index.headers[Self.header("X-Frame-Options")] == "DENY")
            guard case .string(let html) = index.json else { throw Failure("not text") }
            #expect(html.contains("/dashboard/assets/app.js") && !html.contains("<script>"))
            for asset in ["app.js", "api.js", "browser.js", "schema.js", "config.js", "console.js", "dom.js", "values.js", "style.css"] {
                let r = try await p.raw(.get, "/dashboard/assets/\(asset)", headers: [:])
                #expect(r.status == 200, "\(asset)")
            }
            #expect(try await p.raw(.get, "/dashboard/assets/../Package.swift", headers: [:]).status == 404)
            #expect(try await p.raw(.get, "/dashboard/api/session", headers: [:]).status == 401)
        }
    }

    @Test("master key sign-in: an HTTP-only same-site cookie; REST calls need it together with the CSRF token", arguments: Backend.all)
    func masterSession(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let (reply, cookie, csrf) = try await Self.signIn(p, ["masterKey": .string(TestServer.masterKey)])
            #expect(reply.status == 200)
            let setCookie = try #require(reply.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            #expect(reply["readOnly"] == false)
            #expect(reply["applicationId"] == .string(TestServer.appId))
            let created = try await Self.call(p, .post, "/classes/Note", ["text": "hi"], cookie: cookie, csrf: csrf)
            #expect(created.status == 201, "\(created.json)")
            #expect(try await Self.call(p, .get, "/schemas", cookie: cookie, csrf: csrf).status == 200)
            // The cookie alone (what another site could make a browser send) or a wrong token: unauthorized.
            #expect(try await Self.call(p, .get, "/schemas", cookie: cookie, csrf: nil).status == 403)
            #expect(try await Self.call(p, .get, "/schemas", cookie: cookie, csrf: "0" + (csrf ?? "")).status == 403)
            #expect(try await Self.call(p, .get, "/schemas", cookie: nil, csrf: csrf).status == 403)
            // The session survives a reload (GET /dashboard/api/session) and ends at sign-out.
            var h = HTTPFields()
            h[.cookie] = cookie
            let again = try await p.raw(.get, "/dashboard/api/session", headers: h)
            #expect(again["csrfToken"] == .string(csrf ?? ""))
            h[Self.header("X-Parsley-Dashboard-CSRF")] = csrf
            #expect(try await p.raw(.post, "/dashboard/api/logout", headers: h).status == 200)
            #expect(try await Self.call(p, .get, "/schemas", cookie: cookie, csrf: csrf).status == 403)
        }
    }

    @Test("sign-in refusals: a wrong key, another origin, plain form posts, a non-admin user; 10 failures a minute then 429", arguments: Backend.all)
    func refusals(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            #expect(try await Self.signIn(p, ["masterKey": "nope"]).reply.status == 403)
            let crossOrigin = try await Self.signIn(p, ["masterKey": .string(TestServer.masterKey)], origin: "https://evil.example")
            #expect(crossOrigin.reply.status == 403)
            #expect(crossOrigin.cookie == nil)
            var form = HTTPFields()
            form[.contentType] = "application/x-www-form-urlencoded"
            #expect(try await p.raw(.post, "/dashboard/api/login", body: "masterKey=\(TestServer.masterKey)", headers: form).status == 415)
            // Users: only members of the admin role (directly or through a role), with the right password.
            let (annId, _) = try await p.newUser("ann")
            let (bobId, _) = try await p.newUser("bob")
            // Members of a role listed in Admins.roles are admins (Parse's direction of inheritance).
            let owners = try await p.createRole("Owners", users: [bobId])
            _ = try await p.createRole("Admins", roles: [owners])
            let ann = try await Self.signIn(p, ["username": "ann", "password": "pw-ann"])
            #expect(ann.reply.status == 403)
            #expect(ann.reply.code == 119)
            let bob = try await Self.signIn(p, ["username": "bob", "password": "pw-bob"])
            #expect(bob.reply.status == 200, "\(bob.reply.json)")
            #expect(bob.reply["username"] == "bob")
            #expect(try await Self.call(p, .get, "/classes/_User/\(annId)", cookie: bob.cookie, csrf: bob.csrf).status == 200)
            #expect(try await Self.signIn(p, ["username": "bob", "password": "wrong"]).reply.code == 101)
            for _ in 0..<10 { _ = try await Self.signIn(p, ["masterKey": "still-wrong"]) }
            #expect(try await Self.signIn(p, ["masterKey": .string(TestServer.masterKey)]).reply.status == 429)
        }
    }

    @Test("the read-only master key reads everything and writes nothing (119), over REST, files and the dashboard", arguments: Backend.all)
    func readOnly(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options()) { p in
            let id = try await p.createId("Note", ["text": "kept"])
            var h = p.headers(master: false)
            h[Self.header("X-Parse-Master-Key")] = Self.readOnlyKey
            let read = try await p.raw(.get, "/parse/classes/Note/\(id)", headers: h)
            #expect(read["text"] == "kept")
            #expect(try await p.raw(.get, "/parse/schemas", headers: h).status == 200)
            let writes: [(HTTPRequest.Method, String, String?, String)] = [
                (.post, "/parse/classes/Note", #"{"text":"x"}"#, "create"), (.put, "/parse/classes/Note/\(id)", #"{"text":"x"}"#, "update"),
                (.delete, "/parse/classes/Note/\(id)", nil, "delete"), (.put, "/parse/config", #"{"params":{"a":1}}"#, "update"),
                (.post, "/parse/schemas/Other", #"{"className":"Other"}"#, "create"), (.post, "/parse/files/a.txt", "hello", "create"),
            ]
            for (method, path, body, op) in writes {
                let r = try await p.raw(method, path, body: body, headers: h)
                #expect(r.code == 119, "\(method) \(path): \(r.json)")
                #expect(r["error"] == .string("read-only masterKey isn't allowed to perform the \(op) operation."))
            }
            #expect(try await p.get("Note", id)["text"] == "kept")
            let session = try await Self.signIn(p, ["masterKey": .string(Self.readOnlyKey)])
            #expect(session.reply["readOnly"] == true)
            #expect(try await Self.call(p, .get, "/classes/Note", cookie: session.cookie, csrf: session.csrf).results.count == 1)
            #expect(try await Self.call(p, .delete, "/classes/Note/\(id)", cookie: session.cookie, csrf: session.csrf).code == 119)
        }
    }

    @Test("dashboard false: no pages, and the cookie authorizes nothing")
    func off() async throws {
        let options = Self.options { $0.dashboard.enabled = false }
        try await TestServer.with(backend: .sqlite, options) { p in
            let page = try await p.raw(.get, "/dashboard", headers: [:])
            #expect(page.status == 404)
            var h = HTTPFields()
            h[.contentType] = "application/json"
            let login = try await p.raw(.post, "/dashboard/api/login", body: #"{"masterKey":"test-master-key"}"#, headers: h)
            #expect(login.status == 404)
        }
    }
}

extension DashboardTests {
    /// The repository (this file is Tests/ParsleyAPITests/DashboardTests.swift).
    static var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    @Test("the dashboard in headless Chromium (Tests/browser through Selenium): every page a person uses, each change checked over REST")
    func inARealBrowser() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PARSLEY_BIN"] = ProcessTests.binary.path
        let (status, output) = try await ChildProcess.run(
            "/bin/bash", [Self.root.appendingPathComponent("scripts/browser-tests.sh").path], environment: environment, directory: Self.root,
            limit: .seconds(600))
        #expect(status == 0, "scripts/browser-tests.sh:\n\(output.suffix(6000))")
        #expect(output.contains(" passed") && !output.contains(" failed"), "\(output.suffix(2000))")
    }
}
