import GraphQL
import OrderedCollections
import Logging
import NIOConcurrencyHelpers
public import ParsleyCore
public import ParsleyDomain

/// Parse Server's GraphQL API over the Domain services: a request's `{query, variables, operationName}` answered
/// under the caller's `Auth`, so every CLP, ACL, protected field and trigger applies exactly as on REST. The schema is
/// built from the app's classes and rebuilt when they change. HTTP (headers, keys, the session) is ParsleyHTTP's.
public final class GraphQLService: Sendable {
    let services: GraphQLServices
    let schemas: SchemaService
    let limits: GraphQLLimits
    let config: GraphQLConfigService
    /// The schema built last and the class shapes it was built from.
    private let cache = NIOLockedValueBox<(signature: String, schema: BuiltSchema)?>(nil)
    /// The classes and configuration the last request found, and its schema: while they are the same, the shapes
    /// and their signature are not worked out again.
    private let lastSeen = NIOLockedValueBox<(classes: [String: ClassSchema], config: GraphQLConfig, schema: BuiltSchema)?>(nil)
    /// Documents that parsed and validated, by their text, with the schema they validated against: a query sent
    /// again is neither parsed nor validated again while the schema is the same.
    private let documents = NIOLockedValueBox<[String: ValidatedDocument]>([:])
    /// Documents kept at most (the table is emptied when it is full).
    static let documentsKept = 256
    let logger = Logger(label: "parsley.graphql")
    private let plainCount = NIOLockedValueBox(0)
    /// Operations answered by `PlainQuery` since the start (the rest ran on the GraphQL library's executor).
    public var plainAnswers: Int { plainCount.withLockedValue { $0 } }
    /// `enableSanitizedErrorResponse`: a sanitizable refusal a resolver met reads `Permission denied`, as on REST.
    let sanitize: Bool

    /// The API over an app's services.
    public init(services: ParseServices) {
        let options = services.options
        self.services = GraphQLServices(
            queries: services.queries, objects: services.objects, maxLimit: options.maxLimit, users: services.users, roles: services.roles,
            cloud: services.cloud, schemas: services.schemas, lockSchemas: options.schema?.lockSchemas == true,
            applicationId: options.applicationId)
        self.schemas = services.schemas
        self.limits = options.graphQLLimits
        self.config = services.graphQLConfig
        self.sanitize = options.enableSanitizedErrorResponse
    }

    /// An answer: its HTTP status and JSON text (`{"data":...,"errors":[...]}`).
    public struct Answer: Sendable {
        public let status: Int
        public let body: String
    }

    /// Runs one operation. `body` is the request's JSON (or a GET's query parameters as an object); resolver errors
    /// answer 200 with `errors[].extensions.code` the Parse code, a document that does not parse or validate answers
    /// 400 (docs/graphql-contract.md §1.4). Without the master or maintenance key, introspection is refused (403)
    /// unless `graphQLPublicIntrospection`, the depth and field limits apply (400, code 102) and messages name no
    /// schema the caller did not write (§1.5, §10). Over GET only queries run (405 otherwise). `uploads` are a
    /// multipart request's files (`GraphQLUpload.marker` in the variables) and `storeFile` how `createFile` stores one.
    public func execute(
        _ body: JSONValue?, auth: Auth, viaGET: Bool = false, uploads: [String: GraphQLUpload] = [:], storeFile: StoreFile? = nil
    ) async -> Answer {
        guard case .object(let request)? = body else {
            if case .array? = body { return Self.failure(400, "Batched GraphQL requests are not supported.", code: "BAD_REQUEST") }
            return Self.failure(400, "GraphQL operations must contain a non-empty `query`.", code: "BAD_REQUEST")
        }
        guard case .string(let query)? = request["query"], !query.isEmpty else {
            return Self.failure(400, "GraphQL operations must contain a non-empty `query`.", code: "BAD_REQUEST")
        }
        var variables: [String: Map] = [:]
        switch request["variables"] {
        case .object(let values)?: for (name, value) in values { variables[name] = MapJSON.map(value) }
        case nil, .null?: break
        default: return Self.failure(400, "`variables` in a POST body should be an object.", code: "BAD_REQUEST")
        }
        let operationName = request["operationName"]?.stringValue
        let document: Document
        do {
            document = try parsed(query)
        } catch let error as GraphQLError {
            return Self.answer(400, data: nil, errors: [error], code: "GRAPHQL_PARSE_FAILED", hints: hints(auth, query))
        } catch {
            return Self.failure(400, "Syntax Error", code: "GRAPHQL_PARSE_FAILED")
        }
        if let operation = OperationGuard(document).operation(named: operationName) {
            if viaGET, operation.operation != .query {
                return Self.failure(405, "Can only perform a \(operation.operation.rawValue) operation from a POST request.", code: "BAD_REQUEST")
            }
            if operation.operation == .subscription {
                return Self.failure(
                    400, "Subscriptions are served over WebSocket (graphql-transport-ws) at the GraphQL path.", code: "BAD_REQUEST")
            }
        }
        return await run(
            document, query: query, variables: variables, operationName: operationName, auth: auth,
            context: GraphQLContext(auth: auth, uploads: uploads, storeFile: storeFile))
    }

    /// `query` parsed: the document kept for it when it validated before, else parsed now (HTTP requests, socket
    /// messages and each subscription event share this).
    func parsed(_ query: String) throws -> Document {
        if let known = documents.withLockedValue({ $0[query] }) { return known.document }
        return try parse(source: Source(body: query, name: "GraphQL request"))
    }

    /// Messages as a caller may see them: without schema hints unless it has the master or maintenance key or
    /// `graphQLPublicIntrospection` is on.
    func hints(_ auth: Auth, _ query: String) -> (String) -> String {
        let redacts = !(auth.isMaster || auth.isMaintenance) && !limits.publicIntrospection
        return { message in redacts ? SchemaHints.redact(message, query: query) : message }
    }

    /// Runs a parsed operation under the rules of the caller: introspection and size limits, validation, then
    /// execution from `rootValue` (a subscription's event, or nothing).
    func run(
        _ document: Document, query: String, variables: [String: Map], operationName: String?, auth: Auth, rootValue: any Sendable = (),
        context: GraphQLContext? = nil
    ) async -> Answer {
        let privileged = auth.isMaster || auth.isMaintenance
        let hints = hints(auth, query)
        let shape = OperationGuard(document)
        if !privileged, !limits.publicIntrospection, shape.introspects {
            return Self.failure(403, "Introspection is not allowed", code: "FORBIDDEN", data: false)
        }
        if !privileged, let operation = shape.operation(named: operationName), let exceeded = shape.check(operation, limits) {
            return Self.failure(400, exceeded.message, code: String(exceeded.code.rawValue))
        }
        do {
            let built = try await schema()
            let schema = built.schema
            var known = documents.withLockedValue { $0[query] }
            if known?.schema !== schema {
                let invalid = validate(schema: schema, ast: document, rules: specifiedRules)
                if !invalid.isEmpty { return Self.answer(400, data: nil, errors: invalid, code: "GRAPHQL_VALIDATION_FAILED", hints: hints) }
                let validated = ValidatedDocument(document: document, schema: schema, plain: PlainQuery(document, built, services: services))
                documents.withLockedValue { table in
                    if table.count >= Self.documentsKept { table.removeAll() }
                    table[query] = validated
                }
                known = validated
            }
            // A plain read (class gets and finds, their fields and pointers) runs without the library's executor; it
            // falls back to it for anything else it meets on the way (an error, a null where the schema says non-null).
            if rootValue is Void, let plain = known?.plain, operationName == nil || operationName == plain.operationName,
                let body = await plain.answer(variables: variables, auth: auth)
            {
                plainCount.withLockedValue { $0 += 1 }
                return Answer(status: 200, body: body)
            }
            let result = try await GraphQL.execute(
                schema: schema, documentAST: document, rootValue: rootValue, context: context ?? GraphQLContext(auth: auth),
                variableValues: variables, operationName: operationName)
            // Nothing ran: the variables or the operation name were refused.
            if result.data == nil, !result.errors.isEmpty, result.errors.allSatisfy({ $0.path.elements.isEmpty && $0.originalError == nil }) {
                return Self.answer(400, data: nil, errors: result.errors, code: "BAD_USER_INPUT", hints: hints, sanitize: sanitize)
            }
            for error in result.errors {
                if let original = error.originalError, !(original is ParseError), !(original is GraphQLError) {
                    logger.error("GraphQL resolver failed: \(String(reflecting: original))")
                }
            }
            return Self.answer(200, data: result.data ?? .null, errors: result.errors, code: nil, hints: hints, sanitize: sanitize)
        } catch {
            logger.error("GraphQL request failed: \(String(reflecting: error))")
            return Self.failure(200, "Internal server error", code: "1")
        }
    }

    /// The schema of the classes as they are now: the one built last while they have not changed.
    func schema() async throws -> BuiltSchema {
        try await schemas.refreshIfDue()
        let (all, config) = (schemas.all(), try await config.current())
        // The classes and configuration the schema was built for, unchanged (a shared dictionary compares at once).
        if let seen = lastSeen.withLockedValue({ $0 }), seen.config == config, seen.classes == all { return seen.schema }
        let shapes = ClassShape.shapes(all, config: config)
        let signature = Self.signature(shapes)
        if let cached = cache.withLockedValue({ $0 }), cached.signature == signature {
            lastSeen.withLockedValue { $0 = (all, config, cached.schema) }
            return cached.schema
        }
        let schema = try SchemaBuilder(services: services).build(shapes)
        let problems = validateSchema(schema: schema.schema)
        guard problems.isEmpty else { throw InvalidSchema(problems: problems.map(\.message)) }
        cache.withLockedValue { $0 = (signature, schema) }
        lastSeen.withLockedValue { $0 = (all, config, schema) }
        return schema
    }

    /// What the schema depends on: the classes shown, their names, fields, types and required flags.
    static func signature(_ shapes: [ClassShape]) -> String {
        shapes.map { shape in
            shape.className + "("
                + [shape.getName, shape.findName, shape.createName, shape.updateName, shape.deleteName].map { $0 ?? "-" }
                .joined(separator: ",") + "){"
                + shape.fields.map { "\($0.name):\($0.type.display)\(shape.schema.fieldOptions[$0.name]?.isRequired == true ? "!" : "")" }
                .joined(separator: ",") + "}" + (shape.settings.map { String(describing: $0) } ?? "")
        }.joined(separator: ";")
    }

    /// A parsed document and the schema it validated against. `@unchecked Sendable`: the GraphQL library's syntax
    /// tree is not marked `Sendable`, and nothing changes a parsed document (it is only read, by every request that
    /// sends the same text).
    final class ValidatedDocument: @unchecked Sendable {
        let document: Document
        let schema: GraphQLSchema
        /// The document as a plain read, when it is one.
        let plain: PlainQuery?

        init(document: Document, schema: GraphQLSchema, plain: PlainQuery?) {
            self.document = document
            self.schema = schema
            self.plain = plain
        }
    }

    /// A generated schema GraphQL refuses (a bug here, logged; the request answers `Internal server error`).
    struct InvalidSchema: Error {
        let problems: [String]
    }

    // MARK: Answers

    /// One error; `data: null` follows it on a 200 (and wherever `data` says).
    static func failure(_ status: Int, _ message: String, code: String, data: Bool? = nil) -> Answer {
        var body = "{\"errors\":[{\"message\":"
        body += JSONWriter.string(.string(message))
        body += ",\"extensions\":{\"code\":" + (Int(code) != nil ? code : JSONWriter.string(.string(code))) + "}}]"
        body += data ?? (status == 200) ? ",\"data\":null}" : "}"
        return Answer(status: status, body: body)
    }

    /// `{"errors":[...],"data":...}`; `code` is the `extensions.code` of errors that are not a resolver's.
    static func answer(_ status: Int, data: Map?, errors: [GraphQLError], code: String?, hints: (String) -> String, sanitize: Bool = false)
        -> Answer
    {
        var body = "{"
        if !errors.isEmpty {
            body += "\"errors\":["
            body += errors.map { error($0, code: code, hints: hints, sanitize: sanitize) }.joined(separator: ",")
            body += "]"
        }
        if let data {
            if !errors.isEmpty { body += "," }
            body += "\"data\":"
            MapJSON.write(data, into: &body)
        }
        return Answer(status: status, body: body + "}")
    }

    /// One error: a Parse error as its message and numeric code, anything else a resolver threw as `Internal server
    /// error` (code 1), GraphQL's own errors (null where the schema says non-null, ...) as they are.
    static func error(_ error: GraphQLError, code: String?, hints: (String) -> String, sanitize: Bool = false) -> String {
        var message = hints(error.message)
        var extensionCode: JSONValue? = code.map { .string($0) }
        if let parse = error.originalError as? ParseError {
            message = parse.answered(sanitize: sanitize).message
            if message != parse.message { Logger(label: "parsley.graphql").info("Sanitized error: \(parse.message)") }
            extensionCode = .int(Int64(parse.code.rawValue))
        } else if let original = error.originalError, !(original is GraphQLError) {
            message = "Internal server error"
            extensionCode = .int(1)
        }
        var out = "{\"message\":" + JSONWriter.string(.string(message))
        if !error.locations.isEmpty {
            out += ",\"locations\":["
            out += error.locations.map { "{\"line\":\($0.line),\"column\":\($0.column)}" }.joined(separator: ",")
            out += "]"
        }
        if !error.path.elements.isEmpty {
            out += ",\"path\":["
            out +=
                error.path.elements.map { element in
                    switch element {
                    case .index(let i): return String(i)
                    case .key(let key): return JSONWriter.string(.string(key))
                    }
                }
                .joined(separator: ",")
            out += "]"
        }
        if let extensionCode { out += ",\"extensions\":{\"code\":" + JSONWriter.string(extensionCode) + "}" }
        return out + "}"
    }
}
