import ParsleyCore

/// The fields `GET /aggregate` may name and answer. Aggregate is read with the master key or the read-only master key,
/// and sees what a master-key find sees, without what no read ever hands out:
/// - internal `_` fields (`_hashed_password`, `_email_verify_token`, `_perishable_token`, `_password_history`,
///   `_failed_login_count`, `_account_lockout_expires_at`, `_rperm`/`_wperm`...): a find never returns them (its
///   SELECT leaves them out, `FindSpec.includeInternal`) and a client's `where` may not name them (`QueryParser`);
/// - credentials a master-key find returns but no aggregate needs: `_Session.sessionToken` (with the read-only
///   master key it would turn read access into log-ins), and for the read-only master key `_User.authData` too (its
///   finds leave it out as well, `Permissions.credentials`).
///
/// Naming one of them anywhere (`distinct`, `where`/`$match` and their sub-queries and `$select` keys, the `$group`
/// key and accumulators, `$project`, `$sort`) is 105 and runs nothing, so no value, count, group, order or match can
/// depend on a credential. `authData` is answered as a master-key find answers it (the master key's); `ACL` is not a column (102 in
/// `$group`, `[]` for `distinct`, as Parse Server's PostgreSQL adapter answers).
enum AggregateFields {
    /// Fields not starting with `_` that are credentials, by class.
    static let credentials: [String: Set<String>] = ["_Session": ["sessionToken"]]

    /// Whether `path` (a field, or a dotted path into one) is out of aggregate's reach in `className`.
    static func isHidden(_ path: String, in className: String, readOnly: Bool = false) -> Bool {
        let field = path.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        return field.hasPrefix("_") || credentials[className]?.contains(field) == true
            || (readOnly && Permissions.credentials(className).contains(field))
    }

    /// 105 `Invalid field name: <path>.` for a hidden field.
    static func check(_ path: String, in className: String, readOnly: Bool = false) throws(ParseError) {
        if isHidden(path, in: className, readOnly: readOnly) { throw ParseError.invalidKeyName(path) }
    }

    /// Every field the conditions name, in sub-queries too (each in its own class, with its `$select` key).
    static func check(_ node: QueryNode, in className: String, readOnly: Bool = false) throws(ParseError) {
        switch node {
        case .all, .relatedTo: return
        case .and(let nodes), .or(let nodes), .nor(let nodes):
            for n in nodes { try check(n, in: className, readOnly: readOnly) }
        case .field(let path, let condition):
            try check(path.field, in: className, readOnly: readOnly)
            switch condition {
            case .inQuery(let sub), .notInQuery(let sub): try check(sub.predicate, in: sub.className, readOnly: readOnly)
            case .select(let sub, let key), .dontSelect(let sub, let key):
                try check(key, in: sub.className, readOnly: readOnly)
                try check(sub.predicate, in: sub.className, readOnly: readOnly)
            default: return
            }
        }
    }

    /// An object of a `$match`/`$project`/`$sort` answer without hidden fields.
    static func visible(_ object: [String: JSONValue], in className: String, readOnly: Bool = false) -> [String: JSONValue] {
        object.filter { !isHidden($0.key, in: className, readOnly: readOnly) }
    }
}
