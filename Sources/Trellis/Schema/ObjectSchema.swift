/// The schema of one class: its persisted properties in declaration order.
public struct ObjectSchema: Sendable, Equatable, CustomStringConvertible {
    /// The class name.
    public let className: String
    /// Persisted properties in declaration order. LinkingObjects are computed and not listed
    /// (see ``computedProperties``).
    public let properties: [Property]
    /// LinkingObjects properties.
    public let computedProperties: [Property]
    /// Whether this is an embedded class.
    public let isEmbedded: Bool
    /// Asymmetric objects are a sync feature; always false.
    public var isAsymmetric: Bool { false }

    /// The model class the schema describes (Realm's `objectClass`): the program's class of
    /// this name, else ``DynamicObject`` (a class known only from a file's stored schema).
    public var objectClass: AnyClass {
        if let type = ProgramModelClasses.modelClass(named: className) { return type }
        if let known = ClassInfo.known(named: className), known.objectType != ObjectBase.self { return known.objectType }
        return DynamicObject.self
    }

    /// The primary key property, if any.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }

    /// The property named `propertyName` (persisted or computed).
    public subscript(propertyName: String) -> Property? {
        properties.first { $0.name == propertyName } ?? computedProperties.first { $0.name == propertyName }
    }

    /// The class as Realm prints it: its name (and `(embedded)`), then each property's
    /// description indented by a tab, persisted properties first.
    public var description: String {
        "\(className) \(isEmbedded ? "(embedded) " : ""){\n"
            + (properties + computedProperties).map { "\t\(indented($0.description))\n" }.joined() + "}"
    }
}

/// The schema of a Realm: one ``ObjectSchema`` per class.
public struct Schema: Sendable, Equatable, CustomStringConvertible {
    /// The classes, sorted by name.
    public let objectSchema: [ObjectSchema]

    init(_ schemas: [ObjectSchema]) {
        objectSchema = schemas.sorted { $0.className < $1.className }
    }

    /// The schema of the class named `className`.
    public subscript(className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }

    /// The schema as Realm prints it: each class's description, sorted by name, indented by a tab.
    public var description: String {
        "Schema {\n" + objectSchema.map { "\t\(indented($0.description))\n" }.joined() + "}"
    }
}

/// `text` with a tab after each line break (Realm nests descriptions this way).
private func indented(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: "\n\t")
}
