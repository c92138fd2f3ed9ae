import Foundation

/// The App Services / Atlas JSON schemas of a set of models, as Device Sync mapped them:
/// one collection schema per top-level class, links as the target's primary key, embedded
/// objects nested with their `title`, inverse relationships absent.
///
/// ```swift
/// let schema = try AppServicesSchema(objectTypes: [Dog.self, Person.self, Address.self])
/// let json = try schema.jsonSchema(for: "Person")
/// let relationships = try schema.relationships(for: "Person", dataSource: "mongodb-atlas", database: "app")
/// ```
///
/// Output is pretty-printed with sorted keys, so it can be committed and diffed.
public struct AppServicesSchema: Sendable {
    /// The models, by class name.
    public let schema: Schema

    /// The schema of model classes (each class and the classes it links to must be listed).
    public init(objectTypes: [ObjectBase.Type]) throws {
        let classes = Realm.Configuration.withoutRepeats(objectTypes).map(ClassInfo.unbound(for:))
        let problems = SchemaValidator.validate(classes, explicitList: true)
        if !problems.isEmpty { throw SchemaValidator.error(for: problems) }
        self.init(schema: Schema(classes.map(\.objectSchema)))
    }

    /// The schema of an opened Realm (``Realm/schema``).
    public init(schema: Schema) {
        self.schema = schema
    }

    /// The collection schema of a top-level class: `{"title", "bsonType": "object", "required",
    /// "properties"}`.
    ///
    /// - Throws: ``Realm/Error`` (`.invalidSchema`) for an unknown class, an embedded class
    ///   (it has no collection: it is nested in its parents' schemas) or a link to a class
    ///   without a primary key (Atlas stores a link as the target's primary key).
    public func jsonSchema(for className: String) throws -> Data {
        let objectSchema = try topLevel(className)
        return try Self.serialized(documentSchema(objectSchema, isCollection: true))
    }

    /// The `relationships.json` of a top-level class: one entry per link property, by property
    /// name: `{"ref": "#/relationship/<dataSource>/<database>/<Target>", "foreign_key": "_id",
    /// "is_list": Bool}` (`foreign_key` is the target's primary-key property). Links inside
    /// embedded objects are keyed by their dotted path (`address.owner`); `[]` marks a list
    /// of embedded objects on the way (`addresses.[].owner`).
    public func relationships(for className: String, dataSource: String = "mongodb-atlas",
                              database: String) throws -> Data
    {
        let objectSchema = try topLevel(className)
        var entries = [String: Any]()
        try collectRelationships(objectSchema, path: "", into: &entries, dataSource: dataSource, database: database)
        return try Self.serialized(entries)
    }

    /// The classes that get their own collection (not embedded), sorted by name.
    public var collectionClassNames: [String] {
        schema.objectSchema.filter { !$0.isEmbedded }.map(\.className)
    }

    // MARK: - Building the documents

    private func topLevel(_ className: String) throws -> ObjectSchema {
        guard let objectSchema = schema[className] else {
            throw Realm.Error(.invalidSchema, "No class '\(className)' in the schema. Known classes: "
                + schema.objectSchema.map(\.className).joined(separator: ", ") + ".")
        }
        if objectSchema.isEmbedded {
            throw Realm.Error(.invalidSchema, "'\(className)' is an embedded object: it has no collection of its own "
                + "in Atlas. Its schema is nested in the schemas of the classes that contain it.")
        }
        return objectSchema
    }

    /// A class's document schema; `required` is always present on a collection's schema and
    /// only when not empty on an embedded one (as App Services writes them).
    private func documentSchema(_ objectSchema: ObjectSchema, isCollection: Bool) throws -> [String: Any] {
        var properties = [String: Any]()
        var required = [String]()
        for property in objectSchema.properties where property.type != .linkingObjects {
            // The persisted name (propertiesMapping()): what Atlas stores.
            properties[property.columnName] = try propertySchema(property, in: objectSchema)
            if !property.isOptional, property.collection == .none, property.type != .object {
                required.append(property.columnName)
            }
        }
        var document: [String: Any] = ["title": objectSchema.className, "bsonType": "object", "properties": properties]
        if !required.isEmpty || isCollection { document["required"] = required.sorted() }
        return document
    }

    private func propertySchema(_ property: Property, in owner: ObjectSchema) throws -> [String: Any] {
        let element = try elementSchema(property, in: owner)
        switch property.collection {
        case .none: return element
        case .list: return ["bsonType": "array", "items": element]
        case .set: return ["bsonType": "array", "uniqueItems": true, "items": element]
        case .map: return ["bsonType": "object", "additionalProperties": element]
        }
    }

    private func elementSchema(_ property: Property, in owner: ObjectSchema) throws -> [String: Any] {
        guard property.type == .object else { return ["bsonType": Self.bsonType(property.type)] }
        let target = try linkTarget(property, in: owner)
        if target.isEmbedded { return try documentSchema(target, isCollection: false) }
        guard let key = target.primaryKeyProperty else {
            throw Realm.Error(.invalidSchema, "'\(owner.className).\(property.name)' links to '\(target.className)', "
                + "which has no primary key: Atlas stores a link as the target's primary key. Add "
                + "@Persisted(primaryKey: true) to '\(target.className)'.")
        }
        return ["bsonType": Self.bsonType(key.type)]
    }

    private func linkTarget(_ property: Property, in owner: ObjectSchema) throws -> ObjectSchema {
        guard let name = property.objectClassName, let target = schema[name] else {
            throw Realm.Error(.invalidSchema, "'\(owner.className).\(property.name)' links to "
                + "'\(property.objectClassName ?? "?")', which is not in the schema. Add it to the object types.")
        }
        return target
    }

    private func collectRelationships(_ objectSchema: ObjectSchema, path: String, into entries: inout [String: Any],
                                      dataSource: String, database: String) throws
    {
        for property in objectSchema.properties where property.type == .object {
            let target = try linkTarget(property, in: objectSchema)
            let name = path + property.columnName
            if target.isEmbedded {
                let nested = name + (property.collection == .none ? "." : ".[].")
                try collectRelationships(target, path: nested, into: &entries, dataSource: dataSource, database: database)
                continue
            }
            guard let key = target.primaryKeyProperty else {
                _ = try elementSchema(property, in: objectSchema) // throws the missing-primary-key error
                continue
            }
            entries[name] = [
                "ref": "#/relationship/\(dataSource)/\(database)/\(target.className)",
                "foreign_key": key.columnName,
                "is_list": property.collection != .none,
            ] as [String: Any]
        }
    }

    /// The BSON type App Services uses for a stored type.
    static func bsonType(_ type: PropertyType) -> String {
        switch type {
        case .int: "long"
        case .bool: "bool"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "binData"
        case .date: "date"
        case .decimal128: "decimal"
        case .objectId: "objectId"
        case .UUID: "uuid"
        case .any: "mixed"
        case .object, .linkingObjects: "object"
        }
    }

    static func serialized(_ object: Any) throws -> Data {
        var data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys,
                                                                                .withoutEscapingSlashes])
        data.append(0x0A)
        return data
    }
}
