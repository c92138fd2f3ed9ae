import Foundation

/// Objects as MongoDB Extended JSON (canonical form), one document per object, as Atlas stores
/// them: a link becomes the target's primary key, an embedded object a sub-document, a list or
/// set an array, a map a sub-document; inverse relationships are absent.
///
/// | Swift | canonical Extended JSON |
/// |---|---|
/// | `Int` | `{"$numberLong": "42"}` |
/// | `Double`, `Float` | `{"$numberDouble": "1.5"}` |
/// | `Date` | `{"$date": {"$numberLong": "<milliseconds>"}}` |
/// | `ObjectId` | `{"$oid": "<24 hex digits>"}` |
/// | `Decimal128` | `{"$numberDecimal": "1.25"}` |
/// | `Data` | `{"$binary": {"base64": …, "subType": "00"}}` |
/// | `UUID` | `{"$binary": {"base64": …, "subType": "04"}}` |
/// | `String`, `Bool`, nil | JSON string, boolean, null |
public enum ExtendedJSON {
    /// The canonical Extended JSON document of an object (sorted keys, one line).
    public static func document(for object: ObjectBase) throws -> Data {
        try JSONSerialization.data(withJSONObject: documentValue(for: object), options: [.sortedKeys,
                                                                                         .withoutEscapingSlashes])
    }

    /// One document per object.
    public static func documents<Element: ObjectBase>(for results: Results<Element>) throws -> [Data] {
        try results.map { try document(for: $0) }
    }

    /// Creates or updates (`update: .modified`, the document's sets and maps replacing the
    /// object's; a class without a primary key only creates) one object per document. A link given as a
    /// primary key must name an object already in the Realm (import link targets first).
    ///
    /// - Throws: ``Realm/Error`` (`.invalidValue`) for a document that does not fit the class.
    public static func importDocuments<T: Object>(_ documents: [Data], as type: T.Type, into realm: Realm) throws {
        let schema = ClassInfo.unbound(for: type).objectSchema
        let decoder = ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: false)
        var values = [[String: Any]]()
        for (index, data) in documents.enumerated() {
            try DocumentPosition(className: schema.className, number: index + 1).reporting {
                guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    throw Realm.Error(.invalidValue, "An Extended JSON document of '\(schema.className)' must be a JSON "
                        + "object.")
                }
                // As the import through the stored schema: without its key, `create` would make
                // or update the object of the key property's default value.
                if let key = schema.primaryKeyProperty, document[key.columnName] == nil {
                    throw Realm.Error(.invalidValue, "the document has no primary key '\(key.columnName)'. Give every "
                        + "'\(schema.className)' document its '\(key.columnName)'.")
                }
                values.append(try decoder.values(document, schema: schema))
            }
        }
        try realm.write {
            // A class without a primary key cannot be updated: each document adds an object.
            // A document is the object's whole state: its sets and maps replace the object's.
            let updates = schema.primaryKeyProperty != nil
            for value in values {
                if updates { _ = realm.createWritingDocument(type, value: value) } else { realm.create(type, value: value) }
            }
        }
    }

    // MARK: - Export

    /// The document as Foundation JSON objects: `String`, `Bool`, `NSNull`, `[Any]` and
    /// `[String: Any]` only (every number is a wrapped string), so TrellisSync reads it into
    /// its own JSON values without a trip through JSON text.
    package static func documentValue(for object: ObjectBase) throws -> [String: Any] {
        var document = [String: Any]()
        for property in object.objectSchema.properties where property.type != .linkingObjects {
            // Keyed by the persisted name, as the App Services schema and Atlas name it.
            document[property.columnName] = try encode(object.storedValue(forKey: property.name), property)
        }
        return document
    }

    private static func encode(_ value: Any?, _ property: Property) throws -> Any {
        guard let value else { return NSNull() }
        if let collection = value as? any _CollectionProperty {
            let elements = collection._trellisElements
            if property.isMap {
                var document = [String: Any]()
                for case let (key, element) as (String, Any) in elements { document[key] = try encodeElement(element, property) }
                return document
            }
            return try elements.map { try encodeElement($0, property) }
        }
        return try encodeElement(value, property)
    }

    /// The Extended JSON form of `property` of `object`, read through its wrapper
    /// (``DocumentRowReader`` reads the kinds it has no plan for this way).
    static func encodedProperty(of object: ObjectBase, _ property: Property) throws -> Any {
        try encode(object.storedValue(forKey: property.name), property)
    }

    /// The Extended JSON form of one Swift value of `property`.
    static func encodedValue(_ value: Any?, _ property: Property) throws -> Any {
        try encodeElement(value, property)
    }

    private static func encodeElement(_ value: Any?, _ property: Property) throws -> Any {
        guard let value = ValueConversion.unwrapped(value) else { return NSNull() }
        if let embedded = value as? EmbeddedObject { return try documentValue(for: embedded) }
        if let object = value as? Object {
            guard let key = object.objectSchema.primaryKeyProperty else {
                throw Realm.Error(.invalidValue, "'\(property.name)' links to '\(object.objectSchema.className)', which has "
                    + "no primary key: Extended JSON stores a link as the target's primary key.")
            }
            return try encodeElement(object.storedValue(forKey: key.name), key)
        }
        switch value {
        case let int as any BinaryInteger: return ["$numberLong": "\(int)"]
        case let bool as Bool: return bool
        case let double as Double: return ["$numberDouble": canonical(double)]
        case let float as Float: return ["$numberDouble": canonical(Double(float))]
        case let string as String: return string
        case let date as Date:
            return ["$date": ["$numberLong": "\(ExtendedJSONDate.milliseconds(of: date))"]]
        case let id as ObjectId: return ["$oid": id.stringValue]
        case let decimal as Decimal128: return ["$numberDecimal": decimal.stringValue]
        case let data as Data: return ["$binary": ["base64": data.base64EncodedString(), "subType": "00"]]
        case let uuid as UUID:
            return ["$binary": ["base64": withUnsafeBytes(of: uuid.uuid) { Data($0) }.base64EncodedString(), "subType": "04"]]
        case let any as AnyRealmValue:
            switch any {
            case .list(let list): return try list.map { try encodeElement($0, property) }
            case .dictionary(let map):
                var document = [String: Any]()
                for entry in map { document[entry.key] = try encodeElement(entry.value, property) }
                return document
            default: return try encodeElement(any.swiftValue, property)
            }
        default:
            throw Realm.Error(.invalidValue, "'\(property.name)' holds \(type(of: value)), which has no Extended JSON form.")
        }
    }

    /// Extended JSON's spelling of a double: integral values keep a `.0`, specials are words.
    static func canonical(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value == value.rounded(), abs(value) < 1e15 { return String(format: "%.1f", value) }
        return "\(value)"
    }

    // MARK: - Import

    /// The values of `realm.create(_:value:update:)` for a document (TrellisSync's downloads):
    /// a link to an object not in the Realm (outside the subscriptions, or not downloaded
    /// yet) is left out instead of failing.
    /// (One document; a batch uses one ``ExtendedJSONBatchDecoder``, which looks each class
    /// up once.)
    package static func syncValues(_ document: [String: Any], schema: ObjectSchema, realm: Realm) throws
        -> [String: Any]
    {
        try ExtendedJSONBatchDecoder(realm: realm, skipsMissingLinks: true).values(document, schema: schema)
    }

    static func swiftValues(_ document: [String: Any], schema: ObjectSchema, decoder: ExtendedJSONBatchDecoder) throws
        -> [String: Any]
    {
        var values = [String: Any]()
        for property in schema.properties where property.type != .linkingObjects {
            guard let raw = document[property.columnName] else { continue }
            if raw is NSNull {
                if property.collection == .none, !property.isOptional, property.type != .any, property.type != .object {
                    throw notOptional(property, schema)
                }
                values[property.name] = NSNull()
            } else if property.isArray || property.isSet {
                guard let items = raw as? [Any] else { throw mismatch(property, schema, raw) }
                values[property.name] = try items.compactMap { try decodeElement($0, property, schema, decoder) }
            } else if property.isMap {
                guard let entries = raw as? [String: Any] else { throw mismatch(property, schema, raw) }
                values[property.name] = try entries.compactMapValues { try decodeElement($0, property, schema, decoder) }
            } else {
                values[property.name] = try decodeElement(raw, property, schema, decoder) ?? NSNull()
            }
        }
        return values
    }

    private static func decodeElement(_ raw: Any, _ property: Property, _ owner: ObjectSchema,
                                      _ decoder: ExtendedJSONBatchDecoder) throws -> Any?
    {
        if property.type == .any { return try mixedValue(raw, property, owner) }
        if raw is NSNull {
            // Realm's rules: an element of a List or set of objects is never nil; a map of
            // objects and an optional type take nil; any other value must be given.
            let takesNull = property.type == .object ? property.collection == .none || property.isMap
                : property.isOptional
            guard takesNull else { throw notOptional(property, owner) }
            return NSNull()
        }
        if property.type == .object {
            guard let targetName = property.objectClassName, let target = decoder.objectSchema(targetName) else {
                throw mismatch(property, owner, raw)
            }
            if target.isEmbedded {
                guard let document = raw as? [String: Any] else { throw mismatch(property, owner, raw) }
                return try swiftValues(document, schema: target, decoder: decoder)
            }
            guard let key = target.primaryKeyProperty, let type = decoder.objectType(targetName) else {
                throw mismatch(property, owner, raw)
            }
            let keyValue = try scalarValue(raw, key, target)
            guard let linked = decoder.realm.object(ofType: type, forPrimaryKeyValue: keyValue) else {
                if decoder.skipsMissingLinks {
                    decoder.missingTargets.append(
                        ExtendedJSONBatchDecoder.linkTargetIdentity(className: targetName, primaryKey: keyValue))
                    return nil
                }
                throw Realm.Error(.invalidValue, "'\(owner.className).\(property.name)' links to the '\(targetName)' with "
                    + "primary key \(keyValue), which is not in the Realm. Import '\(targetName)' documents first.")
            }
            return linked
        }
        return try scalarValue(raw, property, owner)
    }

    /// The Swift value of a canonical Extended JSON scalar for `property` (not a link).
    static func scalarValue(_ raw: Any, _ property: Property, _ owner: ObjectSchema) throws -> Any {
        let wrapper = raw as? [String: Any]
        let value: Any?
        switch property.type {
        case .int:
            // `$numberInt` is 32-bit in Extended JSON, `$numberLong` 64-bit: a count out of its
            // type's range does not fit (it used to be taken as a 64-bit value).
            if let text = wrapper?["$numberInt"] as? String {
                value = Int32(text).map { Int($0) }
            } else if let text = wrapper?["$numberLong"] as? String {
                value = Int64(text).map { Int($0) }
            } else {
                value = raw as? Int
            }
        case .bool: value = raw as? Bool
        case .double, .float:
            let double = (wrapper?["$numberDouble"] as? String).flatMap(Double.init) ?? (raw as? Double)
            // Mapped to `Any` each: a `Float?` or `Double?` put in `Any?` as such would be a
            // non-nil value holding nil, and a bad number would pass as a value. A finite number
            // past a Float's range (1e300) does not fit a Float: it would be stored as infinity.
            if property.type == .float {
                value = double.flatMap { $0.isFinite && !Float($0).isFinite ? nil : Float($0) as Any }
            } else {
                value = double.map { $0 as Any }
            }
        case .string: value = raw as? String
        case .date:
            let millis = ((wrapper?["$date"] as? [String: Any])?["$numberLong"] as? String).flatMap(Int64.init)
            value = millis.map { ExtendedJSONDate.date(milliseconds: $0) }
        case .objectId: value = (wrapper?["$oid"] as? String).flatMap { try? ObjectId(string: $0) }
        case .decimal128: value = (wrapper?["$numberDecimal"] as? String).flatMap { Decimal(string: $0) }.map(Decimal128.init)
        case .data, .UUID:
            let binary = wrapper?["$binary"] as? [String: Any]
            let data = (binary?["base64"] as? String).flatMap { Data(base64Encoded: $0) }
            if property.type == .data {
                value = data
            } else {
                value = data.flatMap { bytes -> UUID? in
                    guard bytes.count == 16 else { return nil }
                    var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                    withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
                    return UUID(uuid: raw)
                }
            }
        case .any, .object, .linkingObjects: value = nil
        }
        guard let value else { throw mismatch(property, owner, raw) }
        return value
    }

    /// The `AnyRealmValue` of an Extended JSON value: a wrapped scalar by its wrapper, a plain
    /// string or boolean as itself, an array as a nested list and any other document as a
    /// nested dictionary (to any depth). A link cannot be told from a document, so none is made.
    static func mixedValue(_ raw: Any, _ property: Property, _ owner: ObjectSchema) throws -> AnyRealmValue {
        switch raw {
        case is NSNull: return .none
        case let string as String: return .string(string)
        case let array as [Any]: return .fromArray(try array.map { try mixedValue($0, property, owner) })
        case let document as [String: Any]:
            if document.count == 1, let wrapper = document.keys.first, wrapper.hasPrefix("$") {
                return try mixedScalar(wrapper, raw, property, owner)
            }
            return .fromDictionary(try document.mapValues { try mixedValue($0, property, owner) })
        default:
            // JSON's own numbers and booleans (relaxed Extended JSON).
            if let number = raw as? NSNumber {
                if type(of: raw) == Bool.self || String(describing: type(of: number)).contains("Bool") {
                    return .bool(number.boolValue)
                }
                if let int = raw as? Int { return .int(int) }
                return .double(number.doubleValue)
            }
            if let bool = raw as? Bool { return .bool(bool) }
            throw mismatch(property, owner, raw)
        }
    }

    /// A wrapped scalar (`{"$numberLong": "5"}`, `{"$oid": …}`, …) as an `AnyRealmValue`.
    private static func mixedScalar(_ wrapper: String, _ raw: Any, _ property: Property, _ owner: ObjectSchema) throws
        -> AnyRealmValue
    {
        func scalar(_ type: PropertyType) throws -> Any {
            try scalarValue(raw, Property(name: property.name, type: type, isOptional: false, collection: .none,
                                          isIndexed: false, isPrimary: false, objectClassName: nil,
                                          linkOriginPropertyName: nil), owner)
        }
        switch wrapper {
        case "$numberLong", "$numberInt":
            guard let value = try scalar(.int) as? Int else { throw mismatch(property, owner, raw) }
            return .int(value)
        case "$numberDouble":
            guard let value = try scalar(.double) as? Double else { throw mismatch(property, owner, raw) }
            return .double(value)
        case "$numberDecimal":
            guard let value = try scalar(.decimal128) as? Decimal128 else { throw mismatch(property, owner, raw) }
            return .decimal128(value)
        case "$oid":
            guard let value = try scalar(.objectId) as? ObjectId else { throw mismatch(property, owner, raw) }
            return .objectId(value)
        case "$date":
            guard let value = try scalar(.date) as? Date else { throw mismatch(property, owner, raw) }
            return .date(value)
        case "$binary":
            let subType = ((raw as? [String: Any])?["$binary"] as? [String: Any])?["subType"] as? String
            if subType == "04", let value = try scalar(.UUID) as? UUID { return .uuid(value) }
            guard let value = try scalar(.data) as? Data else { throw mismatch(property, owner, raw) }
            return .data(value)
        default:
            throw mismatch(property, owner, raw)
        }
    }

    /// The error for a null where the property (or its collection's elements) takes no nil.
    static func notOptional(_ property: Property, _ owner: ObjectSchema) -> Realm.Error {
        let what = property.collection == .none ? "'\(owner.className).\(property.name)' is not optional"
            : "the elements of '\(owner.className).\(property.name)' are not optional"
        return Realm.Error(.invalidValue, "null does not fit: \(what) (\(property.typeDescription)). Give it a value.")
    }

    static func mismatch(_ property: Property, _ owner: ObjectSchema, _ raw: Any) -> Realm.Error {
        Realm.Error(.invalidValue, "The Extended JSON value \(raw) does not fit '\(owner.className).\(property.name)' "
            + "(\(property.typeDescription)).")
    }
}
