import CParsleySQLite
import ParsleyStorage

/// SQLite's result codes and messages as `StoreError` cases. The messages SQLite and Parsley's own SQL functions
/// write are matched here and nowhere else.
enum SQLiteErrors {
    /// What `parsley_regex` reports for a pattern that does not compile.
    static let invalidRegexMessage = "parsley: invalid regular expression"
    /// What `parsley_regex` reports when a match ran out of its time budget.
    static let regexTimeoutMessage = "parsley: regular expression ran out of time"
    /// Messages of statements beyond what SQLite plans (its limits on nesting and size).
    static let tooComplexMessages = [
        "Expression tree is too large", "parser stack overflow", "too many terms in compound SELECT", "too many FROM clause terms",
        "at most 64 tables in a join",
    ]
    static let uniqueFailedPrefix = "UNIQUE constraint failed: "

    /// - Parameters:
    ///   - code: the result code of the failed call; `extended`: the connection's extended result code.
    ///   - uniqueIndex: the unique index of a table on exactly the given columns, looked up on the connection.
    static func storeError(
        code: Int32, extended: Int32, message: String, uniqueIndex: (_ table: String, _ columns: [String]) -> String?
    ) -> StoreError {
        if extended == PARSLEY_SQLITE_CONSTRAINT_UNIQUE || extended == PARSLEY_SQLITE_CONSTRAINT_PRIMARYKEY
            || (code & 0xFF == PARSLEY_SQLITE_CONSTRAINT && message.hasPrefix(uniqueFailedPrefix))
        {
            return .uniqueViolation(index: indexName(message, primaryKey: extended == PARSLEY_SQLITE_CONSTRAINT_PRIMARYKEY, uniqueIndex))
        }
        if code & 0xFF == PARSLEY_SQLITE_INTERRUPT || message.contains(regexTimeoutMessage) { return .timeout }
        if message.contains(invalidRegexMessage) { return .invalidRegex }
        if tooComplexMessages.contains(where: message.hasPrefix) { return .tooComplex }
        return .database(message)
    }

    /// The index a `UNIQUE constraint failed: ...` message is about. SQLite names an index on expressions
    /// (`index 'name'`) but only the columns of others (`T.a, T.b`): a primary key becomes `T_pkey` (PostgreSQL's
    /// name for it), another index is looked up by its columns. Unknown: the text after the prefix.
    static func indexName(_ message: String, primaryKey: Bool, _ uniqueIndex: (String, [String]) -> String?) -> String {
        guard message.hasPrefix(uniqueFailedPrefix) else { return message }
        let detail = String(message.dropFirst(uniqueFailedPrefix.count))
        if detail.hasPrefix("index '"), detail.hasSuffix("'") {
            return String(detail.dropFirst("index '".count).dropLast())
        }
        // `T.a, T.b`: class and field names never contain dots or commas (Naming), so the split is exact.
        let qualified = detail.split(separator: ",").map { $0.trimmingPrefix(" ") }
        let parts = qualified.map { $0.split(separator: ".", maxSplits: 1).map(String.init) }
        guard let table = parts.first?.first, parts.allSatisfy({ $0.count == 2 && $0[0] == table }) else { return detail }
        if primaryKey { return table + "_pkey" }
        return uniqueIndex(table, parts.map { $0[1] }) ?? detail
    }
}
