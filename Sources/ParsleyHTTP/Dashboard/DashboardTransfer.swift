import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ParsleyCore
import ParsleyDomain

/// `GET /dashboard/api/classes/:className/export?format=jsonl|csv&where=...` streams a class as `ClassExport`
/// writes it, as the master key finds it (the read-only key too); `POST .../import?format=jsonl|csv` reads the body
/// into the class as `ClassImport` does (not for a read-only sign-in: 119) and answers the report
/// `{"imported", "batches", "refusedCount", "refused": [{"line", "code", "error"}]}`. Both need the session's
/// CSRF token, as every other call.
extension DashboardResponder {
    static func format(_ query: [String: String]) -> ClassExport.Format? {
        ClassExport.Format(rawValue: query["format"] ?? "jsonl")
    }

    static func auth(_ session: DashboardSessions.Session) -> Auth {
        var auth = Auth(isMaster: true)
        auth.isReadOnly = session.readOnly
        return auth
    }

    func export(_ request: Request, className: String, session: DashboardSessions.Session, logger: Logger) async -> Response {
        let query = Self.query(request)
        guard let format = Self.format(query) else { return Self.json(400, ["code": 107, "error": "format must be jsonl or csv"]) }
        var whereValue: JSONValue?
        if let text = query["where"], !text.isEmpty {
            guard let parsed = try? JSONParser.parse(text), parsed.objectValue != nil else {
                return Self.json(400, ["code": 107, "error": "where must be a JSON object"])
            }
            whereValue = parsed
        }
        let exporter = ClassExport(queries: api.queries)
        // Refusals known before the first byte (no such class) get their status; later failures cut the stream.
        do { _ = try await exporter.schema(className) } catch { return AnswerErrors.answer(error, request: request, logger: logger) }
        var headers = Self.securityHeaders
        headers[.contentType] = format.contentType
        headers[.cacheControl] = "no-store"
        let fileName = className.filter { $0.isLetter || $0.isNumber || $0 == "_" } + "." + format.rawValue
        headers[.contentDisposition] = "attachment; filename=\"\(fileName)\""
        let auth = Self.auth(session)
        let request = RequestInfo.current
        let matching = whereValue
        let body = ResponseBody { writer in
            var buffer = ByteBuffer()
            try await RequestInfo.$current.withValue(request) {
                _ = try await exporter.run(className, format: format, where: matching, auth: auth) { line in
                    buffer.writeString(line)
                    buffer.writeInteger(UInt8(10))
                    if buffer.readableBytes >= 64 * 1024 {
                        try await writer.write(buffer)
                        buffer.clear()
                    }
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    func importing(_ request: Request, className: String, session: DashboardSessions.Session, logger: Logger) async -> Response {
        guard !session.readOnly else {
            return Self.json(403, ["code": 119, "error": "read-only masterKey isn't allowed to perform the create operation."])
        }
        guard let format = Self.format(Self.query(request)) else { return Self.json(400, ["code": 107, "error": "format must be jsonl or csv"]) }
        do {
            let importer = try await ClassImport(objects: api.objects, className: className, auth: Self.auth(session))
            var reader = ClassImportReader(importer, format: format)
            for try await chunk in request.body { try await reader.feed(chunk.readableBytesView) }
            return Self.json(200, try await reader.finish().json)
        } catch {
            return AnswerErrors.answer(error, request: request, logger: logger)
        }
    }
}
