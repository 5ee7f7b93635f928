import GraphQL
import OrderedCollections
public import ParsleyCore
public import ParsleyDomain

/// One file of a multipart GraphQL request (the GraphQL multipart request spec): its name, type and bytes.
public struct GraphQLUpload: Sendable {
    public let filename: String
    public let contentType: String?
    public let bytes: [UInt8]

    public init(filename: String, contentType: String?, bytes: [UInt8]) {
        self.filename = filename
        self.contentType = contentType
        self.bytes = bytes
    }

    /// What stands for a file in the variables once the HTTP layer placed it where `map` says:
    /// `{"__graphQLUpload": "<map key>"}`, read back by the `Upload` scalar and `createFile`.
    public static func marker(_ key: String) -> JSONValue { ["__graphQLUpload": .string(key)] }
}

extension GraphQLService {
    /// Stores an upload as `POST /files/:name` does (`fileUpload` rules, size limit, file triggers, the store) and
    /// answers its stored name and URL. Supplied by the HTTP layer, which owns the `/files` route.
    public typealias StoreFile = @Sendable (_ upload: GraphQLUpload, _ auth: Auth) async throws -> (name: String, url: String)
}

/// `createFile(input: {upload})` (docs/graphql-contract.md §7.2): the file of a multipart request, stored through the
/// `/files` route's code, answering `fileInfo {name, url}`.
enum FileOperations {
    /// `Upload`: a file of a multipart request (only as a variable that `map` filled).
    static let upload = try! GraphQLScalarType(
        name: "Upload", description: "The Upload scalar type represents a file upload.",
        serialize: { _ in throw GraphQLError(message: "Upload cannot be sent back.") },
        parseValue: { value in
            guard case .dictionary(let fields) = value, case .string? = fields["__graphQLUpload"] else {
                throw GraphQLError(message: "Upload value invalid.")
            }
            return value
        },
        parseLiteral: { _ in throw GraphQLError(message: "Upload literal unsupported.") })

    /// `createFile(input: {upload}): {fileInfo}`, with the `FileInfo` type class fields use (`FieldTypes`).
    static func mutation(_ services: GraphQLServices, fileInfo info: GraphQLObjectType) throws -> (String, GraphQLField)? {
        let field = try RelayMutation.field(
            "createFile", input: ["upload": InputObjectField(type: GraphQLNonNull(upload))], output: ["fileInfo": GraphQLNonNull(info)],
            resolveInContext: { input, context, _ in
                guard let key = input["upload"]?["__graphQLUpload"]?.stringValue, let file = context.uploads[key], let store = context.storeFile
                else {
                    throw ParseError(.fileSaveError, "Invalid file upload.")
                }
                let stored = try await store(file, context.auth)
                return ["fileInfo": JSONValue.object(["__type": "File", "name": .string(stored.name), "url": .string(stored.url)])]
            })
        return ("createFile", field)
    }
}
