/// A persisted property of an object schema.
public struct Property: Sendable, Equatable, CustomStringConvertible {
    /// The property name: the Swift name, which the Swift API, key paths and queries use.
    public let name: String
    /// The name stored in the file: the model's ``ObjectBase/propertiesMapping()`` entry for
    /// the property, else ``name``. A Realm opened without the model classes (a dynamic Realm,
    /// the `trellis` tool, the App Services schema) sees this name.
    public let columnName: String
    /// The stored type (for collections: of the elements).
    public let type: PropertyType
    /// Whether the value (for collections: each element) may be nil.
    public let isOptional: Bool
    /// Whether this is a `List`.
    public var isArray: Bool { collection == .list }
    /// Whether this is a `MutableSet`.
    public var isSet: Bool { collection == .set }
    /// Whether this is a `Map`.
    public var isMap: Bool { collection == .map }
    /// Whether the property has an index (primary keys always do).
    public let isIndexed: Bool
    /// Whether this is the primary key.
    public let isPrimary: Bool
    /// The linked class for links and LinkingObjects.
    public let objectClassName: String?
    /// For LinkingObjects: the property of ``objectClassName`` that links here.
    public let linkOriginPropertyName: String?
    /// For links and collections of objects: what deleting the object that holds this property
    /// does to the objects it links to (``DeleteRule/nullify``, Realm's only behaviour, unless
    /// declared with `@Persisted(onDelete: .cascade)`). Beyond Realm.
    public let deleteRule: DeleteRule

    let collection: CollectionKind

    init(name: String, type: PropertyType, isOptional: Bool, collection: CollectionKind, isIndexed: Bool,
         isPrimary: Bool, objectClassName: String?, linkOriginPropertyName: String?, columnName: String? = nil,
         deleteRule: DeleteRule = .nullify)
    {
        self.deleteRule = deleteRule
        self.name = name
        self.columnName = columnName ?? name
        self.type = type
        self.isOptional = isOptional
        self.collection = collection
        self.isIndexed = isIndexed
        self.isPrimary = isPrimary
        self.objectClassName = objectClassName
        self.linkOriginPropertyName = linkOriginPropertyName
    }

    /// This property under another Swift name and column name.
    func named(_ name: String, columnName: String) -> Property {
        Property(name: name, type: type, isOptional: isOptional, collection: collection, isIndexed: isIndexed,
                 isPrimary: isPrimary, objectClassName: objectClassName, linkOriginPropertyName: linkOriginPropertyName,
                 columnName: columnName, deleteRule: deleteRule)
    }

    /// A short type description: `string?`, `array<Dog>`, `map<string, int>`.
    var typeDescription: String {
        var base = type == .object || type == .linkingObjects ? "<\(objectClassName ?? "?")>" : type.description
        if type == .object { base = "object\(base)" }
        if type == .linkingObjects { base = "linking objects\(base)" }
        if isOptional { base += "?" }
        switch collection {
        case .none: return base
        case .list: return "array<\(base)>"
        case .set: return "set<\(base)>"
        case .map: return "map<string, \(base)>"
        }
    }

    /// The property as Realm prints it (RLMProperty's description): its name, then one
    /// `key = value;` line each for the type, the linked class, the column name and the flags.
    /// A cascade delete rule (beyond Realm) adds a `deleteRule = cascade;` line.
    public var description: String {
        var lines = ["type = \(realmTypeName);"]
        if type == .object || type == .linkingObjects {
            lines.append("objectClassName = \(objectClassName ?? "(null)");")
            lines.append("linkOriginPropertyName = \(linkOriginPropertyName ?? "(null)");")
        }
        lines.append("columnName = \(columnName);")
        // Realm describes LinkingObjects as an array (its RLMProperty's `array` is set).
        let array = isArray || type == .linkingObjects
        for (flag, value) in [("indexed", isIndexed), ("isPrimary", isPrimary), ("array", array), ("set", isSet),
                              ("dictionary", isMap), ("optional", isOptional)]
        {
            lines.append("\(flag) = \(value ? "YES" : "NO");")
        }
        if deleteRule == .cascade { lines.append("deleteRule = cascade;") }
        return "\(name) {\n" + lines.map { "\t\($0)\n" }.joined() + "}"
    }

    /// The type's name in Realm's descriptions (its `RLMTypeToString`): as ``PropertyType``
    /// names it, except `decimal128`.
    private var realmTypeName: String { type == .decimal128 ? "decimal128" : type.description }
}
