import Logging
import Synchronization
import ParsleyCore
import ParsleyStorage

extension LiveQueryHub {
    /// Turns the committed writes of every node into events until the task is cancelled (a background service of
    /// the server). Events are handled one at a time, so each connection receives them in commit order.
    public func run() async {
        guard isEnabled else { return }
        for await item in changes.subscribe(limit: 100_000) {
            switch item {
            case .event(let event): await process(event)
            case .gap: lostEvents()
            }
        }
    }

    /// The connection to the other nodes was lost and is back: events may have been missed, so every client is told
    /// to reconnect (and re-subscribe, which reads the current state).
    func lostEvents() {
        let all = connections.withLock { Array($0.values) }
        logger.warning("LiveQuery: events may have been missed; asking \(all.count) clients to reconnect")
        for c in all {
            c.send(
                LiveQueryError(code: 100, message: "Server lost its connection to the database; events may have been missed", reconnect: true),
                requestId: nil)
            close(c)
        }
    }

    /// One committed write: for each subscription it may concern, the event that subscriber may see, if any.
    func process(_ e: ChangeEvent) async {
        if e.className == "_Session", e.operation == .delete, let token = e.original?["sessionToken"]?.stringValue {
            endSubscriptions(usingSession: token)
        }
        guard isLive(e.className), index.withLock({ $0.listens(to: e.className) }) else { return }
        // A class another node just created is read from the database, not dropped for want of a cache entry.
        guard let schema = try? await schemas.current(e.className) else { return }
        let scope = EventScope(event: e, schema: schema, matcher: QueryMatcher(schema: schema), clp: permissions.classLevelPermissions(e.className))
        let candidates = index.withLock { $0.candidates(e.className, objects: [e.original, e.object], mayConcern: scope.mayConcern) }
        for c in candidates where scope.mayConcern(c.predicateId, c.subscription.predicate) { await deliver(scope, to: c.subscription) }
    }

    /// What every subscriber of one event shares, and the JSON text of the object as each distinct view of it
    /// (protected fields, keys) is sent, made once per event.
    final class EventScope {
        let event: ChangeEvent
        let schema: ClassSchema
        let matcher: QueryMatcher
        let clp: ClassLevelPermissions
        var texts: [String: String] = [:]
        /// The object and original with their includes resolved, per view (`LiveQueryHub.included`).
        var included: [String: ([String: JSONValue], [String: JSONValue]?)] = [:]
        /// The frame texts of object and original with their includes, per view, principals and include paths.
        var includedTexts: [String: (object: String, original: String?)] = [:]
        /// `mayConcern` per distinct predicate.
        var concerns: [Int: Bool] = [:]
        /// What the CLP and protected fields give each distinct reader (user and roles), nil when `find` is denied:
        /// a burst to many subscribers reading as the same principals decides it once.
        var rights: [String: Rights?] = [:]

        struct Rights {
            /// The pointer-permission condition the object must meet (nil: none).
            let pointerRule: QueryNode?
            let access: Permissions.ReadAccess
            /// `LiveQueryHub.view`'s part that depends on the reader, nil when objects are shaped per subscriber.
            let hiddenView: String?
        }

        init(event: ChangeEvent, schema: ClassSchema, matcher: QueryMatcher, clp: ClassLevelPermissions) {
            self.event = event
            self.schema = schema
            self.matcher = matcher
            self.clp = clp
        }

        /// Whether the subscription's query alone can match the object before or after the write (what storage must
        /// decide counts as a maybe): the cheap test that spares most candidates the permission checks.
        func mayConcern(_ predicateId: Int, _ predicate: QueryNode) -> Bool {
            if let known = concerns[predicateId] { return known }
            func may(_ o: [String: JSONValue]?) -> Bool {
                guard let o else { return false }
                return matcher.matches(predicate, o) ?? true
            }
            let answer = may(event.original) || may(event.object)
            concerns[predicateId] = answer
            return answer
        }

        /// The JSON text of `view`'s object, made by `make` the first time.
        func text(_ view: String?, _ make: () -> [String: JSONValue]) -> String {
            guard let view else { return JSONWriter.string(.object(make())) }
            if let known = texts[view] { return known }
            let made = JSONWriter.string(.object(make()))
            texts[view] = made
            return made
        }
    }

    func deliver(_ scope: EventScope, to s: LiveSubscription) async {
        let e = scope.event
        var roleNames: [String] = []
        if !s.isMaster {
            if let token = s.sessionToken {
                do { _ = try await sessions.resolve(token) } catch {
                    return end(s, LiveQueryError(code: 209, message: "Invalid session token", reconnect: false))
                }
            }
            if let userId = s.userId { roleNames = (try? await roles.roleNames(forUser: userId)) ?? [] }
        }
        let auth = Auth(isMaster: s.isMaster, userId: s.userId, roles: roleNames, installationId: s.installationId, sessionToken: s.sessionToken)
        // The CLP as it is now (it may have changed since the subscription): `find`, and its pointer permissions.
        var rights: EventScope.Rights?
        if !s.isMaster {
            guard let known = self.rights(scope, auth: auth) else { return }
            rights = known
        }
        let pointerRule = rights?.pointerRule
        let access = rights?.access
        // A field the query or the watch reads may have become protected since the subscription (a CLP changed, a
        // role was left): the subscription ends as it would now be refused.
        if let access {
            do { try Permissions.denyProtected(access.hidden, in: s.readFields, className: e.className) } catch { return end(s, refusal(error)) }
        }
        // Read permission (ACL, pointer permissions) on each version, then the query on the versions the subscriber
        // may read.
        let principals = auth.principals
        func mayRead(_ o: [String: JSONValue]?) -> Bool {
            guard let o else { return false }
            if let principals, !Self.readable(o, by: principals) { return false }
            if let pointerRule, scope.matcher.matches(pointerRule, o) != true { return false }
            return true
        }
        let readBefore = e.operation != .create && mayRead(e.original)
        let readNow = e.operation != .delete && mayRead(e.object)
        let before = readBefore ? await matches(s.predicate, e.original ?? [:], scope: scope, auth: auth) : false
        let now = readNow ? await matches(s.predicate, e.object ?? [:], scope: scope, auth: auth) : false
        // `watch` compares the versions as the subscriber sees them: a protected field never makes an event.
        var (watchedBefore, watchedNow) = (e.original, e.object)
        if let access, !s.watch.isEmpty {
            watchedBefore = e.original.map { shape($0, scope, access: access, keys: nil) }
            watchedNow = e.object.map { shape($0, scope, access: access, keys: nil) }
        }
        guard
            let kind = LiveQueryEvent.choose(
                e.operation.rawValue, before: before, now: now, watch: s.watch, original: watchedBefore, object: watchedNow)
        else { return }
        // Never a version the subscriber may not read (a leave after losing access carries what it saw before).
        let carried = kind.carries(readBefore: readBefore, readNow: readNow)
        func version(_ v: LiveQueryEvent.Version) -> [String: JSONValue]? {
            switch v {
            case .current: return e.object
            case .previous: return e.original
            case .identity: return LiveQueryEvent.identity(of: e.object)
            }
        }
        func textKey(_ v: LiveQueryEvent.Version) -> String {
            switch v {
            case .current: return "o"
            case .previous: return "r"
            case .identity: return "i"
            }
        }
        let hook = triggers.afterEvent[e.className]
        guard hook != nil || !s.include.isEmpty else {
            // Subscribers who see the same fields share the object's JSON text.
            let view = Self.view(rights, keys: s.keys)
            let object = scope.text(view.map { textKey(carried.object) + $0 }) { shape(version(carried.object), scope, access: access, keys: s.keys) }
            let original = carried.original.map { v in
                scope.text(view.map { textKey(v) + $0 }) { shape(version(v), scope, access: access, keys: s.keys) }
            }
            if s.connection.send(eventText: kind.rawValue, requestId: s.key.requestId, object: object, original: original) {
                counters.delivered.add(1, ordering: .relaxed)
            }
            return
        }
        // With `include`, dotted keys (`owner.name`) keep their pointer, and the included objects are cut to the rest.
        let keys = s.include.isEmpty ? s.keys : QueryService.splitKeys(s.keys).0
        // Subscribers who see the same fields, as the same principals, with the same includes share the frame's object
        // text: shaped, included and written once per event (a burst to 1,000 subscribers is one read and one text).
        if hook == nil, let base = Self.view(rights, keys: s.keys) {
            let versions = textKey(carried.object) + (carried.original.map(textKey) ?? "-")
            let shared =
                "include|" + versions + base + "|" + (auth.principals?.sorted().joined(separator: ",") ?? "*") + "|"
                + s.include.joined(separator: ",")
            let texts: (object: String, original: String?)
            if let known = scope.includedTexts[shared] {
                texts = known
            } else {
                let (object, original) = await included(
                    shape(version(carried.object), scope, access: access, keys: keys),
                    carried.original.map { shape(version($0), scope, access: access, keys: keys) }, s, view: versions + base, scope: scope,
                    auth: auth)
                texts = (JSONWriter.string(.object(object)), original.map { JSONWriter.string(.object($0)) })
                scope.includedTexts[shared] = texts
            }
            if s.connection.send(eventText: kind.rawValue, requestId: s.key.requestId, object: texts.object, original: texts.original) {
                counters.delivered.add(1, ordering: .relaxed)
            }
            return
        }
        var object = shape(version(carried.object), scope, access: access, keys: keys)
        var original = carried.original.map { shape(version($0), scope, access: access, keys: keys) }
        if !s.include.isEmpty {
            let versions = textKey(carried.object) + (carried.original.map(textKey) ?? "-")
            let view = Self.view(rights, keys: s.keys).map { versions + $0 }
            (object, original) = await included(object, original, s, view: view, scope: scope, auth: auth)
        }
        guard let hook else {
            var frame = s.connection.frame(kind.rawValue, requestId: s.key.requestId)
            frame["object"] = .object(object)
            if let original { frame["original"] = .object(original) }
            if s.connection.send(.object(frame)) { counters.delivered.add(1, ordering: .relaxed) }
            return
        }
        do {
            var request = LiveQueryEventRequest(
                caller: try await caller(auth, address: s.connection.address), className: e.className, event: kind.rawValue, object: object,
                original: original, log: cloud.logger)
            try await CloudRuntime.answering { try await hook(&request) }
            guard request.sendEvent else { return }
            // What the trigger added passes the same filter: no protected or internal field gets out this way.
            object = shape(request.object, scope, access: access, keys: nil)
            original = request.original.map { shape($0, scope, access: access, keys: nil) }
        } catch {
            logger.warning("afterLiveQueryEvent failed", metadata: ["class": .string(e.className), "error": "\(error)"])
            return
        }
        var frame = s.connection.frame(kind.rawValue, requestId: s.key.requestId)
        frame["object"] = .object(object)
        if let original { frame["original"] = .object(original) }
        if s.connection.send(.object(frame)) { counters.delivered.add(1, ordering: .relaxed) }
    }

    /// Whether an object's ACL lets one of `principals` read it (no ACL: everyone).
    static func readable(_ object: [String: JSONValue], by principals: [String]) -> Bool {
        guard case .object(let acl)? = object["ACL"] else { return true }
        return principals.contains { acl[$0]?["read"]?.boolValue == true }
    }

    /// What the CLP gives a subscriber who is not the master (`find` and its pointer permissions, protected fields),
    /// decided once per event for each distinct user and roles; nil when `find` is denied.
    func rights(_ scope: EventScope, auth: Auth) -> EventScope.Rights? {
        let reader = (auth.userId ?? "") + "|" + auth.roles.joined(separator: ",")
        if let known = scope.rights[reader] { return known }
        var decided: EventScope.Rights?
        do {
            let pointerRule = try permissions.authorize(.find, scope.schema.className, auth: auth, clp: scope.clp)
            let access = readAccess(scope, auth: auth)
            let hiddenView = Self.hiddenView(access, className: scope.schema.className)
            decided = EventScope.Rights(pointerRule: pointerRule, access: access, hiddenView: hiddenView)
        } catch {
            decided = nil
        }
        scope.rights[reader] = decided
        return decided
    }

    /// The protected fields the subscriber may not see (as a find strips them).
    func readAccess(_ scope: EventScope, auth: Auth) -> Permissions.ReadAccess {
        var access = Permissions.ReadAccess(predicate: .all, className: scope.schema.className, userId: auth.userId, isMaster: false)
        access.hidden = scope.clp.protectedFields(userId: auth.userId, roles: auth.roles).union(Permissions.alwaysProtected(scope.schema.className))
        access.userFieldRules = scope.clp.userFieldRules
        return access
    }

    /// The object as the subscriber receives it: protected fields removed, never a session token or auth data,
    /// relations as placeholders, `className` set, cut to `keys`.
    func shape(_ object: [String: JSONValue]?, _ scope: EventScope, access: Permissions.ReadAccess?, keys: [String]?) -> [String: JSONValue] {
        var o = object ?? [:]
        if let access { o = access.strip([o])[0] }
        for name in o.keys where name.hasPrefix("_") || Self.neverSent.contains(name) { o[name] = nil }
        for (name, type) in scope.schema.fields {
            if case .relation(let target) = type { o[name] = ["__type": "Relation", "className": .string(target)] }
        }
        o["className"] = .string(scope.schema.className)
        return LiveQueryEvent.cut(o, keys: keys)
    }

    /// A name for what `shape` makes for this subscriber when it depends only on the hidden fields and the keys (nil
    /// when a rule looks at the object's owner: such objects are shaped per subscriber). `rights` is nil for the master.
    static func view(_ rights: EventScope.Rights?, keys: [String]?) -> String? {
        let keyPart = keys.map { $0.joined(separator: ",") } ?? "*"
        guard let rights else { return "master|" + keyPart }
        return rights.hiddenView.map { $0 + "|" + keyPart }
    }

    /// The reader's part of `view`: the hidden fields, or nil when a rule looks at the object's owner.
    static func hiddenView(_ access: Permissions.ReadAccess, className: String) -> String? {
        guard access.userFieldRules.isEmpty, className != "_User" else { return nil }
        return access.hidden.sorted().joined(separator: ",")
    }

    /// Credentials that no event carries, whoever subscribes.
    static let neverSent: Set<String> = ["sessionToken", "authData", "password"]

    /// Ends the subscriptions reading as a revoked session, each with an `error` (209, no reconnect).
    func endSubscriptions(usingSession token: String) {
        let affected = index.withLock { idx in idx.subscriptions.filter { $0.sessionToken == token } }
        for s in affected { end(s, LiveQueryError(code: 209, message: "Invalid session token", reconnect: false)) }
    }

    func end(_ s: LiveSubscription, _ error: LiveQueryError) {
        guard index.withLock({ $0.remove(s.key) }) != nil else { return }
        s.connection.send(error, requestId: s.key.requestId)
    }

    // MARK: Matching with storage

    /// Whether `object` matches `predicate`; the parts an object alone cannot decide (`$inQuery`, `$notInQuery`,
    /// `$select`, `$dontSelect`, `$relatedTo`) are asked of storage with the subscriber's read rights.
    func matches(_ predicate: QueryNode, _ object: [String: JSONValue], scope: EventScope, auth: Auth) async -> Bool {
        if let answer = scope.matcher.matches(predicate, object) { return answer }
        let decided = await resolveStorageParts(predicate, object, className: scope.schema.className, auth: auth)
        return scope.matcher.matches(decided, object) ?? false
    }

    /// `node` with each storage-dependent condition replaced by its truth for `object` (`.all` or an empty `$or`).
    func resolveStorageParts(_ node: QueryNode, _ object: [String: JSONValue], className: String, auth: Auth) async -> QueryNode {
        func truth(_ b: Bool) -> QueryNode { b ? .all : .or([]) }
        func each(_ nodes: [QueryNode]) async -> [QueryNode] {
            var out: [QueryNode] = []
            for n in nodes { out.append(await resolveStorageParts(n, object, className: className, auth: auth)) }
            return out
        }
        let byId = { (ids: [String]) in QueryNode.field(FieldPath(field: "objectId"), .isIn(ids.map(JSONValue.string))) }
        switch node {
        case .all: return node
        case .and(let nodes): return .and(await each(nodes))
        case .or(let nodes): return .or(await each(nodes))
        case .nor(let nodes): return .nor(await each(nodes))
        case .relatedTo:
            guard let id = object["objectId"]?.stringValue else { return truth(false) }
            return truth(await exists(className, .and([node, byId([id])]), auth: auth))
        case .field(let path, let condition):
            switch condition {
            case .inQuery(let sub), .notInQuery(let sub):
                let ids = QueryService.pointers(in: object[path.field]).filter { $0.className == sub.className }.map(\.objectId)
                let found = ids.isEmpty ? false : await exists(sub.className, .and([sub.predicate, byId(ids)]), auth: auth)
                if case .inQuery = condition { return truth(found) }
                return truth(!found)
            case .select(let sub, let key), .dontSelect(let sub, let key):
                var found = false
                if let value = object[path.field], !value.isNull {
                    let keyPath = key.split(separator: ".").map(String.init)
                    let target = FieldPath(field: keyPath[0], subpath: Array(keyPath.dropFirst()))
                    found = await exists(sub.className, .and([sub.predicate, .field(target, .equals(value))]), auth: auth)
                }
                if case .select = condition { return truth(found) }
                return truth(!found)
            default:
                return node
            }
        }
    }

    /// Whether `className` has an object matching `predicate` that the subscriber may read.
    func exists(_ className: String, _ predicate: QueryNode, auth: Auth) async -> Bool {
        guard let schema = try? await schemas.current(className) else { return false }
        let spec = FindSpec(schema: schema, predicate: predicate, limit: 1, keys: [], readPrincipals: auth.principals, schemas: schemas.all())
        do { return try await !store.find(spec).isEmpty } catch {
            logger.warning("LiveQuery sub-query failed", metadata: ["class": .string(className), "error": "\(error)"])
            return false
        }
    }
}
