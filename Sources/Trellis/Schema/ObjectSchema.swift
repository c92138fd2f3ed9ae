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

    /// The primary key property, if any.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }

    /// The property named `propertyName` (persisted or computed).
    public subscript(propertyName: String) -> Property? {
        properties.first { $0.name == propertyName } ?? computedProperties.first { $0.name == propertyName }
    }

    public var description: String {
        "\(className) {\n" + (properties + computedProperties).map { "\t\($0)" }.joined(separator: "\n") + "\n}"
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

    public var description: String {
        "Schema {\n" + objectSchema.map(\.description).joined(separator: "\n") + "\n}"
    }
}
