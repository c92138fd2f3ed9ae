import Foundation

/// Queries a database file by the schema stored in it, without the model classes: the same
/// predicate language and evaluation as ``Results/filter(_:_:)``, with classes and links
/// found by name. What `trellis query` runs.
///
/// ```swift
/// let adults = try StoredSchemaQuery.documents(inFile: url, className: "Person",
///                                              predicate: "age >= 18 AND dog.name == 'Rex'",
///                                              sortedBy: "name")
/// ```
public enum StoredSchemaQuery {
    /// The matching objects as Extended JSON documents (canonical form, sorted keys; links as
    /// the target's primary key, or `{"$ref": class, "$id": object key}` when it has none;
    /// embedded objects nested), in file order or sorted.
    ///
    /// - Parameters:
    ///   - className: a top-level class of the file.
    ///   - predicate: a Realm predicate without arguments (`%@`).
    ///   - keyPath: a property, possibly through to-one links (`dog.age`), to sort by.
    ///   - limit: at most this many objects.
    ///   - encryptionKey: the 64-byte key of an encrypted file (nil for a plain one).
    /// - Throws: ``Realm/Error`` with code `.invalidQuery` for a predicate that does not parse or
    ///   does not fit the class (the message gives the offset), `.invalidValue` for an unknown or
    ///   embedded class, and the file errors of opening it read-only.
    public static func documents(inFile url: URL, className: String, predicate: String = "TRUEPREDICATE",
                                 sortedBy keyPath: String? = nil, ascending: Bool = true,
                                 limit: Int? = nil, encryptionKey: Data? = nil) throws -> [Data]
    {
        let realm = try Realm(configuration: .storedSchema(fileURL: url, readOnly: true, encryptionKey: encryptionKey))
        let core = realm.core
        let classes = StoredSchemaClasses(core: core)
        let info = try rootClass(className, in: classes, path: core.environmentPath)
        let test = try compile(predicate, for: info, classes: classes, core: core)
        guard let table = classes.table(of: info) else { return [] }

        var matches = [(key: ObjectKey, row: RowView)]()
        let scope = test.makeScope()
        let cursor = try core.transaction.cursor(table.rows)
        var entry = cursor.first()
        while let (key, bytes) = entry {
            let row = QueryRow(table: table, key: Cursor.integerKey(key), row: RowView(bytes: bytes))
            scope[0] = row
            if test.test(scope) { matches.append((row.key, row.row)) }
            entry = cursor.next()
        }
        if let keyPath {
            matches = try sorted(matches, by: keyPath, ascending: ascending, table: table, classes: classes, core: core)
        }
        if let limit { matches = Array(matches.prefix(max(0, limit))) }

        let reader = StoredObjectReader(core: core, refersByObjectKey: true)
        return try matches.map { match in
            try JSONSerialization.data(withJSONObject: reader.document(className, key: match.key) ?? [:],
                                       options: [.sortedKeys, .withoutEscapingSlashes])
        }
    }

    private static func rootClass(_ name: String, in classes: StoredSchemaClasses, path: String) throws -> ClassInfo {
        guard let info = classes.info(named: name) else {
            throw Realm.Error(.invalidValue, "'\(path)' has no class '\(name)'. Its classes: "
                + classes.classNames.joined(separator: ", ") + ".")
        }
        if info.isEmbedded {
            throw Realm.Error(.invalidValue, "'\(name)' is an embedded class: query its parent class through the "
                + "property that holds it (for example 'address.city == ...').")
        }
        return info
    }

    private static func compile(_ text: String, for info: ClassInfo, classes: StoredSchemaClasses,
                                core: RealmCore) throws -> QueryCompiler.Compiled
    {
        let predicate: QueryPredicate
        do {
            predicate = try QueryParser.parse(text, arguments: [])
        } catch {
            throw Realm.Error(.invalidQuery, QueryParser.message(for: error, in: text))
        }
        do {
            return try QueryCompiler.compile(predicate, for: info, in: core, resolver: classes.resolver)
        } catch {
            throw Realm.Error(.invalidQuery, "Invalid predicate '\(text)': \(error.message)")
        }
    }

    private static func sorted(_ matches: [(key: ObjectKey, row: RowView)], by keyPath: String, ascending: Bool,
                               table: Table, classes: StoredSchemaClasses, core: RealmCore) throws
        -> [(key: ObjectKey, row: RowView)]
    {
        func column(_ keyPath: String) throws -> [QueryValue] {
            let reader: (QueryScope) -> QueryValue
            do {
                reader = try ResultsPipeline.singleValueReader(keyPath, info: table.info, core: core,
                                                               resolver: classes.resolver)
            } catch {
                throw Realm.Error(.invalidQuery, error.message)
            }
            let scope = QueryScope(depth: 0)
            return matches.map { match in
                scope[0] = QueryRow(table: table, key: match.key, row: match.row)
                return reader(scope)
            }
        }
        let values = try column(keyPath)
        // The prefixes of a valid key path are valid key paths.
        let nilLinks = ResultsPipeline.nilLinks(on: keyPath, count: matches.count) { (try? column($0)) ?? [] }
        let order = matches.indices.sorted { a, b in
            ResultsPipeline.sortsFirst(a, b, values, nilLinks, ascending: ascending) ?? (a < b)
        }
        return order.map { matches[$0] }
    }
}
