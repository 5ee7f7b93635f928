import GraphQL
import OrderedCollections
import ParsleyCore
import ParsleyDomain

/// The output and input types of Parse's non-scalar field types (docs/graphql-contract.md §3): `FileInfo`, `GeoPoint`,
/// the `ACL` family, `Bytes`, `Element` and the `Node` and `ParseObject` interfaces every class type implements. Made
/// once per schema.
struct FieldTypes {
    let fileInfo: GraphQLObjectType
    let geoPoint: GraphQLObjectType
    let acl: GraphQLObjectType
    let element: GraphQLObjectType
    let node: GraphQLInterfaceType
    let parseObject: GraphQLInterfaceType
    let geoPointInput: GraphQLInputObjectType
    let fileInput: GraphQLInputObjectType
    /// `ReadOptionsInput` of gets and finds (read preferences: accepted, and meaningless on SQL).
    let readOptions: GraphQLInputObjectType

    /// `applicationId`: the app's id, in file URLs.
    init(applicationId: String) throws {
        fileInfo = try GraphQLObjectType(
            name: "FileInfo",
            fields: [
                "name": Self.jsonField("name", GraphQLNonNull(GraphQLString)),
                "url": GraphQLField(
                    type: GraphQLNonNull(GraphQLString),
                    resolve: { source, _, _, _ in
                        guard let name = (source as? JSONValue)?["name"]?.stringValue else { return nil }
                        if let url = (source as? JSONValue)?["url"]?.stringValue { return Map.string(url) }
                        return Map.string(FileService.url(mountURL: RequestInfo.current.mountURL ?? "", applicationId: applicationId, name: name))
                    }),
            ])
        geoPoint = try GraphQLObjectType(
            name: "GeoPoint",
            fields: [
                "latitude": Self.jsonField("latitude", GraphQLNonNull(GraphQLFloat)),
                "longitude": Self.jsonField("longitude", GraphQLNonNull(GraphQLFloat)),
            ])
        let rights: GraphQLFieldMap = [
            "read": Self.jsonField("read", GraphQLNonNull(GraphQLBoolean)), "write": Self.jsonField("write", GraphQLNonNull(GraphQLBoolean)),
        ]
        var user = rights
        user["userId"] = Self.jsonField("userId", GraphQLNonNull(GraphQLID))
        var role = rights
        role["roleName"] = Self.jsonField("roleName", GraphQLNonNull(GraphQLID))
        let publicRights: GraphQLFieldMap = ["read": Self.jsonField("read", GraphQLBoolean), "write": Self.jsonField("write", GraphQLBoolean)]
        acl = try GraphQLObjectType(
            name: "ACL",
            fields: [
                "users": Self.jsonField("users", GraphQLList(GraphQLNonNull(try GraphQLObjectType(name: "UserACL", fields: user)))),
                "roles": Self.jsonField("roles", GraphQLList(GraphQLNonNull(try GraphQLObjectType(name: "RoleACL", fields: role)))),
                "public": Self.jsonField("public", try GraphQLObjectType(name: "PublicACL", fields: publicRights)),
            ])
        element = try GraphQLObjectType(name: "Element", fields: ["value": Self.jsonField("value", GraphQLNonNull(GraphQLScalars.any))])
        let resolveType: GraphQLTypeResolve = { value, _ in
            guard let object = value as? ParseObjectValue else { throw ParseError(.internalServerError, "Internal server error") }
            return GraphQLNames.typeName(object.className)
        }
        node = try GraphQLInterfaceType(name: "Node", fields: ["id": GraphQLField(type: GraphQLNonNull(GraphQLID))], resolveType: resolveType)
        let acl = self.acl
        parseObject = try GraphQLInterfaceType(
            name: "ParseObject",
            fields: [
                "objectId": GraphQLField(type: GraphQLNonNull(GraphQLID)), "createdAt": GraphQLField(type: GraphQLNonNull(GraphQLScalars.date)),
                "updatedAt": GraphQLField(type: GraphQLNonNull(GraphQLScalars.date)), "ACL": GraphQLField(type: GraphQLNonNull(acl)),
            ], resolveType: resolveType)
        geoPointInput = try GraphQLInputObjectType(
            name: "GeoPointInput",
            fields: [
                "latitude": InputObjectField(type: GraphQLNonNull(GraphQLFloat)), "longitude": InputObjectField(type: GraphQLNonNull(GraphQLFloat)),
            ])
        var preferences: GraphQLEnumValueMap = [:]
        for name in ["PRIMARY", "PRIMARY_PREFERRED", "SECONDARY", "SECONDARY_PREFERRED", "NEAREST"] {
            preferences[name] = GraphQLEnumValue(value: .string(name))
        }
        let preference = try GraphQLEnumType(name: "ReadPreference", values: preferences)
        readOptions = try GraphQLInputObjectType(
            name: "ReadOptionsInput",
            fields: [
                "readPreference": InputObjectField(type: preference), "includeReadPreference": InputObjectField(type: preference),
                "subqueryReadPreference": InputObjectField(type: preference),
            ])
        fileInput = try GraphQLInputObjectType(
            name: "FileInput",
            fields: ["file": InputObjectField(type: GraphQLScalars.file), "upload": InputObjectField(type: FileOperations.upload)])
    }

    /// A field of a shaped value (a `JSONValue` object): its key, `null` when missing.
    static func jsonField(_ key: String, _ type: any GraphQLOutputType) -> GraphQLField {
        GraphQLField(
            type: type,
            resolve: { source, _, _, _ in
                guard let json = source as? JSONValue, let value = json[key], value != .null else { return nil }
                if case .array = value { return value.arrayValue }
                if case .object = value { return value }
                return MapJSON.map(value)
            })
    }

    /// A class field's GraphQL output type (pointers and relations are the class builder's).
    func outputType(_ type: FieldType) -> any GraphQLOutputType {
        switch type {
        case .file: return fileInfo
        case .geoPoint: return geoPoint
        case .polygon: return GraphQLList(GraphQLNonNull(geoPoint))
        case .acl: return acl
        default:
            if let leaf = Self.leafOutputType(type) as? any GraphQLOutputType { return leaf }
            return GraphQLScalars.object
        }
    }

    /// The output type of a field type whose values are leaves (nil: files, points, polygons, ACLs, pointers,
    /// relations and arrays, whose values have fields or items).
    static func leafOutputType(_ type: FieldType) -> (any GraphQLLeafType)? {
        switch type {
        case .string: return GraphQLString
        case .number: return GraphQLFloat
        case .boolean: return GraphQLBoolean
        case .date: return GraphQLScalars.date
        case .bytes: return GraphQLScalars.bytes
        case .object: return GraphQLScalars.object
        case .file, .geoPoint, .polygon, .acl, .pointer, .relation, .array: return nil
        }
    }

    /// The value a shaped field resolves to: objects (`FileInfo`, `GeoPoint`, `ACL`) as a `JSONValue` their own
    /// fields read, a polygon as its points, leaves as a `Map`. A file's `url` is made from its name when the
    /// stored value has none (as REST answers add it), at the mount the request came in on.
    static func output(_ value: JSONValue, _ type: FieldType) -> (any Sendable)? {
        switch type {
        case .file, .geoPoint: return value
        case .polygon:
            guard case .array(let points)? = value["coordinates"] else { return nil }
            return points.map { point -> JSONValue in
                let pair = point.arrayValue ?? []
                return ["latitude": pair.first ?? .null, "longitude": pair.count > 1 ? pair[1] : .null]
            }
        case .acl: return aclOutput(value)
        default: return MapJSON.map(value)
        }
    }

    /// Parse's ACL map as the `ACL` type's value: user ids as global ids, `role:` dropped, a missing right `false`,
    /// empty lists `null`; no ACL at all is public read and write.
    static func aclOutput(_ value: JSONValue?) -> JSONValue {
        guard case .object(let rules)? = value else { return ["public": ["read": true, "write": true]] }
        var users: [JSONValue] = []
        var roles: [JSONValue] = []
        var publicRights: JSONValue = .null
        for key in rules.keys.sorted() {
            let rule = rules[key] ?? .null
            let rights: [String: JSONValue] = ["read": .bool(rule["read"] == .bool(true)), "write": .bool(rule["write"] == .bool(true))]
            if key == "*" {
                publicRights = .object(rights)
            } else if key.hasPrefix("role:") {
                roles.append(.object(rights.merging(["roleName": .string(String(key.dropFirst(5)))]) { a, _ in a }))
            } else {
                users.append(.object(rights.merging(["userId": .string(GraphQLNames.globalId("_User", key))]) { a, _ in a }))
            }
        }
        return ["users": users.isEmpty ? .null : .array(users), "roles": roles.isEmpty ? .null : .array(roles), "public": publicRights]
    }

    /// `ArrayResult`: `Element` or any class type; included objects resolve to their class type.
    func arrayResult(_ table: WeakTypeTable<GraphQLObjectType>, classNames: [String]) throws -> GraphQLUnionType {
        let element = self.element
        let names = Dictionary(classNames.map { ($0, GraphQLNames.typeName($0)) }, uniquingKeysWith: { a, _ in a })
        return try GraphQLUnionType(
            name: "ArrayResult",
            resolveType: { value, _ in
                if let object = value as? ParseObjectValue, let name = names[object.className] { return name }
                return "Element"
            },
            types: { [element] + classNames.compactMap { table[$0] } })
    }

    /// An array's items as `ArrayResult` values: included objects (`__type: "Object"`) as objects of their class,
    /// anything else wrapped as an `Element`.
    static func arrayItems(_ value: JSONValue, shown: Set<String>) -> [any Sendable]? {
        guard case .array(let items) = value else { return nil }
        return items.map { item -> any Sendable in
            if item["__type"] == .string("Object"), let className = item["className"]?.stringValue, shown.contains(className),
                case .object(var fields) = item
            {
                fields["__type"] = nil
                fields["className"] = nil
                return ParseObjectValue(className: className, fields: fields)
            }
            return JSONValue.object(["value": item])
        }
    }
}
