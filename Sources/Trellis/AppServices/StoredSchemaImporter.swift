import Foundation

extension ExtendedJSON {
    /// Imports canonical Extended JSON documents into a file by the schema stored in it, without
    /// the model classes (what `trellis import` runs), with Realm's `update: .modified`: a
    /// document whose primary key is in the file updates that object (properties it leaves out
    /// keep their values; collections it gives are replaced), any other document adds an object.
    ///
    /// Links are the target's primary key and may point at objects of the same import, in any
    /// order; embedded objects are sub-documents. Everything is written in one write
    /// transaction: on any error the file is left as it was.
    ///
    /// Documents are numbered from 1 in errors, blank ones (whitespace only) included and
    /// skipped: given the lines of a `<Class>.json` file, a document's number is its line.
    /// The file's schema version is kept as it is, whatever it is: nothing is migrated.
    ///
    /// - Parameters:
    ///   - documents: class name → one document per object (the layout
    ///     ``documents(inFile:encryptionKey:progress:)`` returns).
    ///   - encryptionKey: the 64-byte key of an encrypted file (nil for a plain one).
    ///   - ignoringUnknownProperties: drop the properties of a document that its class does
    ///     not have (`trellis import --ignore-unknown`). By default they stop the import with
    ///     an error naming the document, the class and the properties: dropping them silently
    ///     would lose data.
    ///   - progress: called after each document is written with the number done and the total.
    /// - Returns: how many documents were imported.
    /// - Throws: ``Realm/Error`` (`.invalidValue`) for an unknown or embedded class, a document
    ///   that does not fit its class (a property the class does not have, unless ignored), or a
    ///   link to an object that is neither in the file nor in the import, with the document's
    ///   class and number; the file errors of opening it.
    public static func importDocuments(_ documents: [String: [Data]], intoFile url: URL,
                                       ignoringUnknownProperties: Bool = false, encryptionKey: Data? = nil,
                                       progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> Int
    {
        let realm = try Realm(configuration: .storedSchema(fileURL: url, readOnly: false,
                                                           encryptionKey: encryptionKey))
        let core = realm.core
        return try realm.write {
            guard let transaction = core.writeTransaction else { return 0 }
            let importer = StoredSchemaImporter(core: core, classes: try StoredSchemaClasses(writingIn: core,
                                                                                              transaction: transaction),
                                                ignoresUnknownProperties: ignoringUnknownProperties)
            core.storedSchema = importer.classes
            defer { core.storedSchema = nil }
            return try importer.run(documents, progress: progress)
        }
    }
}

/// Writes Extended JSON documents through the stored schema's classes (see
/// ``ExtendedJSON/importDocuments(_:intoFile:ignoringUnknownProperties:encryptionKey:progress:)``).
struct StoredSchemaImporter {
    let core: RealmCore
    let classes: StoredSchemaClasses
    /// Whether fields the class does not have are dropped (else they are an error).
    var ignoresUnknownProperties = false

    /// One top-level document, with the object it is written to.
    private struct Pending {
        let table: Table
        let document: [String: Any]
        let key: ObjectKey
        let isNew: Bool
        let position: DocumentPosition
    }

    func run(_ documents: [String: [Data]], progress: ((Int, Int) -> Void)?) throws -> Int {
        // First every object gets its key (and its primary-key entry), so that links between
        // documents resolve whatever their order; then every object is written.
        var pending = [Pending]()
        for className in documents.keys.sorted() {
            let table = try topLevelTable(className)
            for (index, data) in (documents[className] ?? []).enumerated() where !Self.isBlank(data) {
                let position = DocumentPosition(className: className, number: index + 1)
                try position.reporting {
                    guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                        throw Realm.Error(.invalidValue, "an Extended JSON document must be a JSON object. Write one "
                            + "document per line.")
                    }
                    try checkProperties(document, of: table, embeddedIn: nil)
                    pending.append(try place(document, in: table, at: position))
                }
            }
        }
        for (index, object) in pending.enumerated() {
            try object.position.reporting {
                try write(object.document, table: object.table, key: object.key, isNew: object.isNew)
            }
            progress?(index + 1, pending.count)
        }
        return pending.count
    }

    private func topLevelTable(_ className: String) throws -> Table {
        guard let info = classes.info(named: className), let table = classes.table(named: className) else {
            throw Realm.Error(.invalidValue, "The file has no class '\(className)'. Its classes: "
                + classes.classNames.joined(separator: ", ") + ".")
        }
        if info.isEmbedded {
            throw Realm.Error(.invalidValue, "'\(className)' is embedded: import its objects inside their parents' documents.")
        }
        return table
    }

    /// Whether a document is only white space (a blank line of a `<Class>.json` file).
    private static func isBlank(_ data: Data) -> Bool {
        data.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// Refuses a document naming properties its class does not have (unless they are
    /// ignored): dropping them silently would lose data.
    private func checkProperties(_ document: [String: Any], of table: Table, embeddedIn holder: String?) throws {
        guard !ignoresUnknownProperties else { return }
        let known = Set(table.info.storedFields.map(\.name))
        let unknown = document.keys.filter { !known.contains($0) }.sorted()
        guard !unknown.isEmpty else { return }
        let owner = holder.map { "the embedded '\(table.info.className)' in '\($0)'" } ?? "'\(table.info.className)'"
        let names = unknown.map { "'\($0)'" }.joined(separator: ", ")
        throw Realm.Error(.invalidValue, "\(owner) has no \(unknown.count == 1 ? "property" : "properties") \(names). "
            + "Remove \(unknown.count == 1 ? "it" : "them") from the document, or import with --ignore-unknown "
            + "(ignoringUnknownProperties: true) to drop properties the class does not have.")
    }

    /// The object a document is written to: the one with its primary key, or a new one.
    private func place(_ document: [String: Any], in table: Table, at position: DocumentPosition) throws -> Pending {
        guard let primaryKey = table.info.primaryKeyField else {
            return Pending(table: table, document: document, key: core.allocateKey(in: table), isNew: true,
                           position: position)
        }
        guard let raw = document[primaryKey.name] else {
            throw Realm.Error(.invalidValue, "the document has no primary key '\(primaryKey.name)'. Give every "
                + "'\(table.info.className)' document its '\(primaryKey.name)'.")
        }
        let value = try payload(raw, primaryKey, owner: table)
        if let existing = core.lookUpPrimaryKey(table, value) {
            return Pending(table: table, document: document, key: existing, isNew: false, position: position)
        }
        let key = core.allocateKey(in: table)
        core.insertPrimaryKey(table, value, key: key)
        return Pending(table: table, document: document, key: key, isNew: true, position: position)
    }

    /// Writes the row (over the existing values when updating), then the collections the
    /// document gives.
    private func write(_ document: [String: Any], table: Table, key: ObjectKey, isNew: Bool) throws {
        let fields = table.info.storedFields
        let existing = isNew ? nil : core.rowView(table, key)
        var values = [_StoredValue.Payload]()
        for field in fields {
            if field.typeInfo.collection != .none {
                values.append(.none)
            } else if let raw = document[field.name] {
                values.append(try payload(raw, field, owner: table))
            } else if let existing {
                guard case .scalar(let kept) = MigrationStorage.decode(existing, field.rowColumn, field.typeInfo.type) else {
                    values.append(.null)
                    continue
                }
                values.append(kept)
            } else {
                values.append(try defaultPayload(field, owner: table))
            }
        }
        core.writeRow(table, key: key, values: values, isNew: isNew)
        for field in fields where field.typeInfo.collection != .none {
            guard let raw = document[field.name], !(raw is NSNull) else { continue }
            try replaceCollection(field, of: table, key: key, with: raw)
        }
    }

    private func replaceCollection(_ field: FieldInfo, of table: Table, key: ObjectKey, with raw: Any) throws {
        let location = CollectionLocation(table: table, key: key, field: field)
        switch field.typeInfo.collection {
        case .list, .set:
            guard let items = raw as? [Any] else { throw mismatch(field, table, raw) }
            let elements = try items.map { RowWriter.encode(single: try payload($0, field, owner: table)) }
            if field.typeInfo.collection == .list {
                core.listSplice(location, 0..<core.listCount(location), with: elements)
            } else {
                core.setRemoveAll(location)
                for element in elements { _ = core.setInsert(location, element) }
            }
        case .map:
            guard let entries = raw as? [String: Any] else { throw mismatch(field, table, raw) }
            core.mapRemoveAll(location)
            for (entryKey, value) in entries.sorted(by: { $0.key < $1.key }) {
                core.mapSet(location, entryKey, RowWriter.encode(single: try payload(value, field, owner: table)))
            }
        case .none:
            break
        }
    }

    /// The stored form of one Extended JSON value (a whole property, or one element of a
    /// collection): links resolve by primary key, embedded documents become new objects.
    private func payload(_ raw: Any, _ field: FieldInfo, owner: Table) throws -> _StoredValue.Payload {
        if raw is NSNull {
            // The rules of the Swift API: a to-one link, a map of objects, an AnyRealmValue and
            // an optional type take nil; an element of a list or set of objects and any other
            // value do not (a null non-optional primary key made a second object with key 0).
            let collection = field.typeInfo.collection
            let takesNull = field.typeInfo.type == .any
                || (field.isLink ? collection == .none || collection == .map : field.typeInfo.isOptional)
            guard takesNull else { throw ExtendedJSON.notOptional(field.property, owner.info.objectSchema) }
            return .null
        }
        guard field.isLink else {
            let property = field.property
            // An AnyRealmValue takes any Extended JSON value, nested arrays and documents too, as
            // the import through the model classes does (it was refused here).
            let value: Any = property.type == .any ? try ExtendedJSON.mixedValue(raw, property, owner.info.objectSchema)
                : try ExtendedJSON.scalarValue(raw, property, owner.info.objectSchema)
            guard case .scalar(let payload)? = MigrationConversion.scalar(value, property, { _ in nil }) else {
                throw mismatch(field, owner, raw)
            }
            return payload
        }
        guard let target = core.linkedTable(field) else { throw mismatch(field, owner, raw) }
        if target.info.isEmbedded {
            guard let document = raw as? [String: Any] else { throw mismatch(field, owner, raw) }
            try checkProperties(document, of: target, embeddedIn: "\(owner.info.className).\(field.name)")
            let key = core.allocateKey(in: target)
            try write(document, table: target, key: key, isNew: true)
            return .link(key)
        }
        guard let primaryKey = target.info.primaryKeyField else {
            throw Realm.Error(.invalidValue, "'\(owner.info.className).\(field.name)' links to '\(target.info.className)', "
                + "which has no primary key: Extended JSON cannot name the object it links to.")
        }
        let keyValue = try payload(raw, primaryKey, owner: target)
        guard let key = core.lookUpPrimaryKey(target, keyValue) else {
            throw Realm.Error(.invalidValue, "'\(owner.info.className).\(field.name)' links to the '\(target.info.className)' "
                + "with primary key \(PrimaryKeyEncoding.describe(keyValue)), which is neither in the file nor in the "
                + "import.")
        }
        return .link(key)
    }

    /// What a new object holds for a property its document leaves out: nil, or the type's zero.
    private func defaultPayload(_ field: FieldInfo, owner: Table) throws -> _StoredValue.Payload {
        if field.typeInfo.isOptional || field.isLink { return .null }
        switch field.typeInfo.type {
        case .int: return .int(0)
        case .bool: return .bool(false)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .data: return .data(Data())
        case .date: return .date(Date(timeIntervalSince1970: 0))
        case .objectId: return .objectId(ObjectId.generate())
        case .UUID: return .uuid(UUID())
        case .decimal128: return .decimal(Decimal128(Decimal(0)))
        case .any, .object, .linkingObjects: return .null
        }
    }

    private func mismatch(_ field: FieldInfo, _ owner: Table, _ raw: Any) -> Realm.Error {
        ExtendedJSON.mismatch(field.property, owner.info.objectSchema, raw)
    }
}

/// Where a document of an import is: its class and its number, from 1 (its line in a
/// `<Class>.json` file).
struct DocumentPosition: CustomStringConvertible {
    let className: String
    let number: Int

    var description: String { "document \(number) of '\(className)' (line \(number) of \(className).json)" }

    /// Runs `body`, saying in any ``Realm/Error`` it throws which document it was about.
    func reporting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as Realm.Error {
            throw Realm.Error(error.code, "In \(self): \(error.message)", fileURL: error.filePath)
        }
    }
}
