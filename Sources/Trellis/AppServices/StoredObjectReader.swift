import Foundation

/// Reads objects by the schema stored in the file into Extended JSON values.
struct StoredObjectReader {
    let core: RealmCore
    let catalog: SchemaCatalog
    /// How a link to a class without a primary key is written: an error (Extended JSON export,
    /// where the link must be the target's primary key), or a DBRef-style
    /// `{"$ref": class, "$id": object key}` (query output, which only shows the object).
    let refersByObjectKey: Bool

    init(core: RealmCore, refersByObjectKey: Bool = false) {
        self.core = core
        catalog = core.file.catalog
        self.refersByObjectKey = refersByObjectKey
    }

    private func rows(_ className: String) -> DatabaseHandle? {
        Table.existingRows(of: className, in: core.transaction)
    }

    func keys(of className: String) -> [ObjectKey] {
        guard let rows = rows(className), let cursor = core.transaction.existingCursor(rows) else { return [] }
        var keys = [ObjectKey]()
        var entry = cursor.first()
        while let (key, _) = entry {
            keys.append(Cursor.integerKey(key))
            entry = cursor.next()
        }
        return keys
    }

    /// The document of one object, or nil if its row is missing.
    func document(_ className: String, key: ObjectKey) throws -> [String: Any]? {
        guard let stored = catalog.storedClass(named: className), let rows = rows(className),
              let bytes = core.transaction.get(rows, integerKey: key)
        else { return nil }
        let row = RowView(bytes: bytes)
        var values = [(Property, MigrationValue)]()
        for (column, property) in stored.properties.map(\.property).enumerated() {
            values.append((property, MigrationStorage.value(of: property, column: column, row: row, table: stored.tableId,
                                                           key: key, txn: core.transaction,
                                                           collections: core.file.collections)))
        }
        var document = [String: Any]()
        for (property, value) in values where property.type != .linkingObjects {
            document[property.name] = try json(value, property)
        }
        return document
    }

    private func json(_ value: MigrationValue, _ property: Property) throws -> Any {
        switch value {
        case .null: return NSNull()
        case .list(let elements), .set(let elements): return try elements.map { try json($0, property) }
        case .map(let entries):
            var document = [String: Any]()
            for entry in entries { document[entry.key] = try json(entry.value, property) }
            return document
        case .scalar(.link(let key)):
            guard let target = property.objectClassName, let schema = catalog.storedClass(named: target) else {
                return NSNull()
            }
            if schema.embedded { return try document(target, key: key) ?? NSNull() }
            if refersByObjectKey, !schema.properties.contains(where: \.primary) {
                return ["$ref": target, "$id": ["$numberLong": String(key)]]
            }
            guard let primaryKey = schema.properties.map(\.property).firstIndex(where: \.isPrimary),
                  let rows = rows(target), let bytes = core.transaction.get(rows, integerKey: key)
            else {
                throw Realm.Error(.invalidValue, "'\(property.name)' links to '\(target)', which has no primary key: "
                    + "Extended JSON stores a link as the target's primary key.")
            }
            let keyProperty = schema.properties[primaryKey].property
            return try json(MigrationStorage.decode(RowView(bytes: bytes), primaryKey, keyProperty.type), keyProperty)
        case .scalar(let payload):
            return try ExtendedJSON.encodedValue(MigrationConversion.swiftValue(payload), property)
        }
    }
}
