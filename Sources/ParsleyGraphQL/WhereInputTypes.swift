import GraphQL
import OrderedCollections
import ParsleyCore

/// The constraint input types of `where`, one per Parse field type (docs/graphql-contract.md §4.3), made once per
/// schema. Pointer and relation constraints (`{G}RelationWhereInput`) are per class: `ClassInputTable` has them.
struct WhereInputTypes {
    let id: GraphQLInputObjectType
    let string: GraphQLInputObjectType
    let number: GraphQLInputObjectType
    let boolean: GraphQLInputObjectType
    let date: GraphQLInputObjectType
    let bytes: GraphQLInputObjectType
    let file: GraphQLInputObjectType
    let array: GraphQLInputObjectType
    let object: GraphQLInputObjectType
    let geoPoint: GraphQLInputObjectType
    let polygon: GraphQLInputObjectType

    init(_ fieldTypes: FieldTypes) throws {
        let subquery = try GraphQLInputObjectType(
            name: "SubqueryInput",
            fields: [
                "className": InputObjectField(type: GraphQLNonNull(GraphQLString)),
                "where": InputObjectField(type: GraphQLNonNull(GraphQLScalars.object)),
            ])
        let select = try GraphQLInputObjectType(
            name: "SelectInput",
            fields: ["query": InputObjectField(type: GraphQLNonNull(subquery)), "key": InputObjectField(type: GraphQLNonNull(GraphQLString))])
        let search = try GraphQLInputObjectType(
            name: "SearchInput",
            fields: [
                "term": InputObjectField(type: GraphQLNonNull(GraphQLString)), "language": InputObjectField(type: GraphQLString),
                "caseSensitive": InputObjectField(type: GraphQLBoolean), "diacriticSensitive": InputObjectField(type: GraphQLBoolean),
            ])
        let text = try GraphQLInputObjectType(name: "TextInput", fields: ["search": InputObjectField(type: GraphQLNonNull(search))])
        let regex: InputObjectFieldMap = ["matchesRegex": InputObjectField(type: GraphQLString), "options": InputObjectField(type: GraphQLString)]

        id = try Self.constraints("IdWhereInput", GraphQLID, select)
        string = try Self.constraints(
            "StringWhereInput", GraphQLString, select, extra: regex.merging(["text": InputObjectField(type: text)]) { a, _ in a })
        number = try Self.constraints("NumberWhereInput", GraphQLFloat, select)
        boolean = try GraphQLInputObjectType(
            name: "BooleanWhereInput",
            fields: [
                "equalTo": InputObjectField(type: GraphQLBoolean), "notEqualTo": InputObjectField(type: GraphQLBoolean),
                "exists": InputObjectField(type: GraphQLBoolean), "inQueryKey": InputObjectField(type: select),
                "notInQueryKey": InputObjectField(type: select),
            ])
        date = try Self.constraints("DateWhereInput", GraphQLScalars.date, select)
        bytes = try Self.constraints("BytesWhereInput", GraphQLScalars.bytes, select)
        file = try Self.constraints("FileWhereInput", GraphQLScalars.file, select, extra: regex)
        array = try Self.constraints(
            "ArrayWhereInput", GraphQLScalars.any, select,
            extra: [
                "containedBy": InputObjectField(type: GraphQLList(GraphQLScalars.any)),
                "contains": InputObjectField(type: GraphQLList(GraphQLScalars.any)),
            ])
        let keyValue = try GraphQLInputObjectType(
            name: "KeyValueInput",
            fields: [
                "key": InputObjectField(type: GraphQLNonNull(GraphQLString)), "value": InputObjectField(type: GraphQLNonNull(GraphQLScalars.any)),
            ])
        object = try Self.constraints("ObjectWhereInput", keyValue, select)

        let point = fieldTypes.geoPointInput
        let box = try GraphQLInputObjectType(
            name: "BoxInput",
            fields: ["bottomLeft": InputObjectField(type: GraphQLNonNull(point)), "upperRight": InputObjectField(type: GraphQLNonNull(point))])
        let within = try GraphQLInputObjectType(name: "WithinInput", fields: ["box": InputObjectField(type: GraphQLNonNull(box))])
        let centerSphere = try GraphQLInputObjectType(
            name: "CenterSphereInput",
            fields: ["center": InputObjectField(type: GraphQLNonNull(point)), "distance": InputObjectField(type: GraphQLNonNull(GraphQLFloat))])
        let geoWithin = try GraphQLInputObjectType(
            name: "GeoWithinInput",
            fields: ["polygon": InputObjectField(type: GraphQLList(GraphQLNonNull(point))), "centerSphere": InputObjectField(type: centerSphere)])
        var geo: InputObjectFieldMap = [
            "exists": InputObjectField(type: GraphQLBoolean), "nearSphere": InputObjectField(type: point),
            "within": InputObjectField(type: within), "geoWithin": InputObjectField(type: geoWithin),
        ]
        for distance in ["maxDistance", "maxDistanceInRadians", "maxDistanceInMiles", "maxDistanceInKilometers"] {
            geo[distance] = InputObjectField(type: GraphQLFloat)
        }
        geoPoint = try GraphQLInputObjectType(name: "GeoPointWhereInput", fields: geo)
        let intersects = try GraphQLInputObjectType(name: "GeoIntersectsInput", fields: ["point": InputObjectField(type: point)])
        polygon = try GraphQLInputObjectType(
            name: "PolygonWhereInput",
            fields: ["exists": InputObjectField(type: GraphQLBoolean), "geoIntersects": InputObjectField(type: intersects)])
    }

    /// The comparison operators of a type (`equalTo`, `lessThan`, `in`, `exists`, `inQueryKey`, ...) and `extra`.
    static func constraints(
        _ name: String, _ type: any GraphQLInputType, _ select: GraphQLInputObjectType, extra: InputObjectFieldMap = [:]
    ) throws -> GraphQLInputObjectType {
        var fields: InputObjectFieldMap = [:]
        for op in ["equalTo", "notEqualTo", "lessThan", "lessThanOrEqualTo", "greaterThan", "greaterThanOrEqualTo"] {
            fields[op] = InputObjectField(type: type)
        }
        fields["in"] = InputObjectField(type: GraphQLList(type))
        fields["notIn"] = InputObjectField(type: GraphQLList(type))
        fields["exists"] = InputObjectField(type: GraphQLBoolean)
        fields["inQueryKey"] = InputObjectField(type: select)
        fields["notInQueryKey"] = InputObjectField(type: select)
        for (key, value) in extra { fields[key] = value }
        return try GraphQLInputObjectType(name: name, fields: fields)
    }

    /// The constraint type of a non-pointer field (nil: none).
    func constraint(_ type: FieldType) -> GraphQLInputObjectType? {
        switch type {
        case .string: return string
        case .number: return number
        case .boolean: return boolean
        case .date: return date
        case .bytes: return bytes
        case .file: return file
        case .array: return array
        case .object, .acl: return object
        case .geoPoint: return geoPoint
        case .polygon: return polygon
        case .pointer, .relation: return nil
        }
    }
}
