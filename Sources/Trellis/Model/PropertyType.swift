/// The stored type of a property, as Realm names it.
public enum PropertyType: Int, Sendable, CustomStringConvertible {
    case int, bool, float, double, UUID, string, data, any, date, objectId, decimal128, object, linkingObjects

    public var description: String {
        switch self {
        case .int: "int"
        case .bool: "bool"
        case .float: "float"
        case .double: "double"
        case .UUID: "uuid"
        case .string: "string"
        case .data: "data"
        case .any: "mixed"
        case .date: "date"
        case .objectId: "object id"
        case .decimal128: "decimal"
        case .object: "object"
        case .linkingObjects: "linking objects"
        }
    }

    /// Whether values of this type live in a row's tail (variable width).
    var isVariableWidth: Bool {
        switch self {
        case .string, .data, .objectId, .decimal128, .UUID, .any: true
        default: false
        }
    }
}

/// How a property holds its values.
enum CollectionKind: String, Codable, Sendable {
    case none, list, set, map
}

/// What schema discovery learns from a property's Swift type.
///
/// Public only because `_Persistable` names it; not API.
public struct _PropertyTypeInfo {
    var type: PropertyType
    /// For a single value: whether it may be nil. For a collection: whether its elements may.
    var isOptional: Bool = false
    var collection: CollectionKind = .none
    /// The linked class for `.object` and `.linkingObjects`.
    var objectType: ObjectBase.Type?
    /// The Swift spelling of the type, for error messages ("List<Dog>").
    var swiftName: String = ""
    /// Set for types that may never be optional (AnyRealmValue).
    var forbidsOptional: Bool = false
    /// The linked class's name when there is no Swift type for it (a schema read from a file).
    var storedTargetName: String?
    /// Whether that class is embedded.
    var storedTargetIsEmbedded = false
    /// A non-optional custom type whose persisted type is an object (`@Persisted var counter:
    /// Counter` where `Counter.PersistedType` is an embedded object): as in Realm the link
    /// underneath is nullable (`isOptional`) for a property or a map value, a null link reading
    /// as the custom type's default value; a `List` of it holds no nulls.
    var isLinkThroughCustomType = false

    init(_ type: PropertyType, objectType: ObjectBase.Type? = nil, swiftName: String = "") {
        self.type = type
        self.objectType = objectType
        self.swiftName = swiftName
    }

    var objectClassName: String? { objectType?.className() ?? storedTargetName }
}
