/// Decodes a batch of Extended JSON documents into the values of `Realm.create` (an import,
/// a TrellisSync download): each class's schema and model type is looked up once for the
/// batch, not once per link (`Realm.schema` builds the whole schema on every call).
///
/// Use it within one write transaction of `realm`, on the Realm's thread.
package final class ExtendedJSONBatchDecoder {
    let realm: Realm
    /// A link to an object not in the Realm is left out (TrellisSync: outside the
    /// subscriptions, or later in the download) instead of failing.
    let skipsMissingLinks: Bool
    /// Built at the first link (a document without links needs no schema but its own).
    private lazy var schemas: [String: ObjectSchema] = {
        var schemas = [String: ObjectSchema]()
        for schema in realm.schema.objectSchema { schemas[schema.className] = schema }
        return schemas
    }()
    private var types = [String: Object.Type?]()
    /// The targets of the links the last ``values(_:schema:)`` left out (not in the Realm), as
    /// ``linkTargetIdentity(className:primaryKey:)`` names them, in document order.
    package internal(set) var missingTargets: [String] = []
    /// Whether the last ``values(_:schema:)`` left a link out (its target was missing).
    package var leftOutLink: Bool { !missingTargets.isEmpty }

    package init(realm: Realm, skipsMissingLinks: Bool) {
        self.realm = realm
        self.skipsMissingLinks = skipsMissingLinks
    }

    /// The schema of a class of the Realm.
    package func objectSchema(_ className: String) -> ObjectSchema? { schemas[className] }

    /// The configured model type of a class (nil without `objectTypes`, or not one of them).
    package func objectType(_ className: String) -> Object.Type? {
        if let known = types[className] { return known }
        let type = realm.configuration.objectTypes?.first { $0.className() == className } as? Object.Type
        types[className] = type
        return type
    }

    /// The values of `realm.create(_:value:update:)` for one document of `schema`'s class.
    ///
    /// - Throws: ``Realm/Error`` (`.invalidValue`) for a document that does not fit the class.
    package func values(_ document: [String: Any], schema: ObjectSchema) throws -> [String: Any] {
        missingTargets.removeAll(keepingCapacity: true)
        return try ExtendedJSON.swiftValues(document, schema: schema, decoder: self)
    }

    /// A name for the object of class `className` with primary key `primaryKey` (its Swift
    /// value: `Int`, `String`, `ObjectId`, `UUID`), the same whichever Extended JSON spelling
    /// the key came in: what ``missingTargets`` lists, so a missing target can be told when it
    /// arrives.
    package static func linkTargetIdentity(className: String, primaryKey: Any) -> String {
        className + "\u{0}" + String(describing: primaryKey)
    }
}
