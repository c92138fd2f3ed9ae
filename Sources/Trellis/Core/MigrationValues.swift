import Foundation

/// Reads stored values by the schema in the file, without model classes (the old layout of
/// a migration).
enum MigrationStorage {
    /// `tableId u32 | objectKey u64 | column u16`, as ``CollectionLocation/ownerPrefix``.
    static func ownerPrefix(table: UInt32, key: ObjectKey, column: Int) -> [UInt8] {
        var out = [UInt8]()
        BigEndian.append(table, to: &out)
        BigEndian.append(key, to: &out)
        BigEndian.append(UInt16(column), to: &out)
        return out
    }

    static func decode(_ row: RowView, _ column: Int, _ type: PropertyType) -> MigrationValue {
        if row.isNull(column) { return .null }
        switch type {
        case .int: return .scalar(.int(row.int(column)))
        case .bool: return .scalar(.bool(row.bool(column)))
        case .float: return .scalar(.float(row.float(column)))
        case .double: return .scalar(.double(row.double(column)))
        case .date: return .scalar(.date(row.date(column)))
        case .string: return .scalar(.string(row.string(column)))
        case .data: return .scalar(.data(row.data(column)))
        case .objectId: return .scalar(.objectId(row.objectId(column)))
        case .UUID: return .scalar(.uuid(row.uuid(column)))
        case .decimal128: return .scalar(.decimal(row.decimal(column)))
        case .any: return row.mixed(column).map { .scalar(.mixed($0)) } ?? .null
        case .object: return .scalar(.link(row.slot(column)))
        case .linkingObjects: return .null
        }
    }

    /// The value of one stored property of a row (`column` in the stored schema), with its
    /// list, set or map read from the collections database.
    static func value(of property: Property, column: Int, row: RowView, table: UInt32, key: ObjectKey,
                      txn: Transaction, collections: DatabaseHandle) -> MigrationValue
    {
        let owner = ownerPrefix(table: table, key: key, column: column)
        switch property.collection {
        case .none:
            return decode(row, column, property.type)
        case .list:
            return .list(listElements(owner, txn: txn, collections: collections).map { decodeElement($0, property.type) })
        case .set:
            return .set(entries(owner + [CollectionKey.setTag], txn: txn, collections: collections)
                .map { decodeElement($0.value, property.type) })
        case .map:
            return .map(mapEntries(owner, txn: txn, collections: collections)
                .map { ($0.key, decodeElement($0.value, property.type)) })
        }
    }

    /// An element of a list, set or map (a one-column row).
    static func decodeElement(_ bytes: [UInt8], _ type: PropertyType) -> MigrationValue {
        bytes.withUnsafeBytes { decode(RowView(bytes: $0), 0, type) }
    }

    static func entries(_ prefix: [UInt8], txn: Transaction, collections: DatabaseHandle)
        -> [(key: [UInt8], value: [UInt8])]
    {
        guard let cursor = txn.existingCursor(collections) else { return [] }
        return cursor.entries(withPrefix: prefix).map { (Array($0.key), Array($0.value)) }
    }

    static func listElements(_ owner: [UInt8], txn: Transaction, collections: DatabaseHandle) -> [[UInt8]] {
        let header = (owner + [CollectionKey.headerTag]).withUnsafeBytes { txn.get(collections, key: $0) }
        guard let header else { return [] }
        var elements = [[UInt8]]()
        for chunk in ListHeader(header).chunks {
            var key = owner + [CollectionKey.chunkTag]
            BigEndian.append(chunk.id, to: &key)
            if let bytes = key.withUnsafeBytes({ txn.get(collections, key: $0) }) {
                elements += ListChunk.elements(bytes).map { Array($0) }
            }
        }
        return elements
    }

    static func mapEntries(_ owner: [UInt8], txn: Transaction, collections: DatabaseHandle)
        -> [(key: String, value: [UInt8])]
    {
        let prefix = owner + [CollectionKey.mapTag]
        return entries(prefix, txn: txn, collections: collections).map {
            (String(decoding: $0.key.dropFirst(prefix.count), as: UTF8.self), $0.value)
        }
    }
}

/// Swift values to and from stored values, by the property's type (migration objects are
/// untyped).
enum MigrationConversion {
    static func swiftValue(_ payload: _StoredValue.Payload) -> Any? {
        switch payload {
        case .null, .none: nil
        case .int(let value): Int(value)
        case .bool(let value): value
        case .float(let value): value
        case .double(let value): value
        case .date(let value): value
        case .string(let value): value
        case .data(let value): value
        case .objectId(let value): value
        case .decimal(let value): value
        case .uuid(let value): value
        case .link(let key): key
        // A link inside an AnyRealmValue is read by the migrator (``Migrator/read(_:of:)``);
        // here it reads as `.none`.
        case .mixed(let value): AnyRealmValue(stored: value, core: nil, nested: nil)
        }
    }

    /// The stored form of `value` for `property`, or nil when it has the wrong type. `link`
    /// gives where a link to a `MigrationObject`'s entry points (nil: it cannot be linked to).
    static func value(_ value: Any?, for property: Property, link: (MigrationEntry) -> MigrationLink?) -> MigrationValue? {
        guard let value = ValueConversion.unwrapped(value) else {
            return property.collection == .none ? .null : emptyCollection(property.collection)
        }
        switch property.collection {
        case .none:
            return scalar(value, property, link)
        case .list, .set:
            guard !(value is String), let sequence = value as? any Sequence else { return nil }
            let items = anyArray(sequence)
            var elements = [MigrationValue]()
            for item in items {
                guard let element = scalar(ValueConversion.unwrapped(item), property, link) else { return nil }
                elements.append(element)
            }
            return property.collection == .list ? .list(elements) : .set(elements)
        case .map:
            guard let dictionary = value as? [String: Any] ?? (value as? MigrationMapEntries)?.migrationEntries else {
                return nil
            }
            var entries = [(key: String, value: MigrationValue)]()
            for (key, item) in dictionary.sorted(by: { $0.key < $1.key }) {
                guard let element = scalar(ValueConversion.unwrapped(item), property, link) else { return nil }
                entries.append((key, element))
            }
            return .map(entries)
        }
    }

    /// The migration's object `value` is, as itself or as an `AnyRealmValue.object`.
    private static func migrationObject(in value: Any) -> MigrationEntry? {
        if let object = value as? DynamicObject { return object.migrationEntry }
        if case .object(let object)? = value as? AnyRealmValue { return (object as? DynamicObject)?.migrationEntry }
        return nil
    }

    private static func anyArray<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }

    private static func emptyCollection(_ kind: CollectionKind) -> MigrationValue {
        switch kind {
        case .set: .set([])
        case .map: .map([])
        default: .list([])
        }
    }

    static func scalar(_ value: Any?, _ property: Property, _ link: (MigrationEntry) -> MigrationLink?)
        -> MigrationValue?
    {
        guard var value else { return .null }
        if let raw = value as? any RawRepresentable { value = raw.rawValue }
        let payload: _StoredValue.Payload?
        switch property.type {
        case .int: payload = (value as? any BinaryInteger).map { .int(Int64($0)) }
            ?? (value as? NSNumber).map { .int($0.int64Value) }  // read from a migration object
        case .bool: payload = (value as? Bool).map { .bool($0) }
        case .float: payload = (value as? Float).map { .float($0) } ?? (value as? Double).map { .float(Float($0)) }
        case .double: payload = (value as? Double).map { .double($0) } ?? (value as? Float).map { .double(Double($0)) }
            ?? (value as? Int).map { .double(Double($0)) }
        case .string: payload = (value as? String).map { .string($0) }
        case .data: payload = (value as? Data).map { .data($0) }
        case .date: payload = (value as? Date).map { .date($0) }
        case .objectId: payload = (value as? ObjectId).map { .objectId($0) }
            ?? (value as? String).flatMap { try? ObjectId(string: $0) }.map { .objectId($0) }
        case .UUID: payload = (value as? UUID).map { .uuid($0) }
        case .decimal128: payload = (value as? Decimal128).map { .decimal($0) }
            ?? (value as? Decimal).map { .decimal(Decimal128($0)) } ?? (value as? Int).map { .decimal(Decimal128(Decimal($0))) }
        case .object:
            payload = (value as? DynamicObject)?.migrationEntry.flatMap(link)
                .flatMap { $0.className == property.objectClassName ? .link($0.key) : nil }
        case .any:
            if let linked = migrationObject(in: value) {
                // A migration's object (`.object(newObject)` too) is held as a link, as in Realm.
                payload = link(linked).map { .mixed(.link(tableId: $0.tableId, key: $0.key)) }
                break
            }
            // A plain value too (`migrationObject["any"] = "hello"`), as outside migrations.
            let any = AnyRealmValue.converting(value)
            payload = any == AnyRealmValue.none ? .null : any?.storedTree(nil).map { .mixed($0) }
        case .linkingObjects: payload = nil
        }
        return payload.map { .scalar($0) }
    }
}

/// Where a link to a migration's object points: its class, table and key.
struct MigrationLink {
    let className: String
    let tableId: UInt32
    let key: ObjectKey
}
