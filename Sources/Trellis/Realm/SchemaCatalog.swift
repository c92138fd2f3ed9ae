import Foundation

/// The schema as stored in the file (JSON under the `catalog` key of the `meta` database).
///
/// Written when a class is first stored and whenever the schema version changes; compared with
/// the models on every open.
struct SchemaCatalog: Codable, Equatable {
    /// 2: the catalog has a checksum (`catalog.sum`); files of format 1 are read without one.
    /// 3: every class keeps a column copy of its rows (``ColumnStorage``); a writable open
    /// upgrades a file of format 2 (``ColumnUpgrade``), and Trellis versions that read format 2
    /// refuse format 3, so no older writer can leave the copies behind the rows.
    /// 4: backlink counts are stored (``BacklinkCountBlockKey``); a writable open builds them
    /// from the backlinks of a file of format 3 (``FileState``), and versions that read format 3
    /// refuse format 4, so no older writer can change a link without its count.
    /// 5: properties may carry a delete rule (``StoredProperty/onDelete``). New files are 5; a
    /// file of format 4 opens as before (it has no rules) and records 5 once one of its
    /// properties cascades (``noteDeleteRules()``), so versions that read format 4 refuse a file
    /// whose deletes they would not cascade.
    /// 6: rows may have slots narrower than 8 bytes (``RowFormat``), and a primary-key entry's
    /// value (the object key) has only its significant bytes. New files are 6; a writable open
    /// writes every row and primary-key entry of a file of format 3-5 again that way
    /// (``CompactUpgrade``; format 2 in ``ColumnUpgrade``), and versions that read format 5 refuse
    /// format 6, so none reads a compact row as 8-byte slots. This version reads both layouts.
    static let formatVersion = 6
    /// The first format with compact rows and primary-key entries.
    static let compactLayoutFormat = 6
    /// log2 of the objects per chunk of the column copies, unless the configuration says
    /// otherwise (tests make chunks small, so that they fill and empty across many keys).
    static let defaultColumnShift = 8

    struct StoredProperty: Codable, Equatable {
        var name: String
        var type: Int
        var optional: Bool
        var collection: CollectionKind
        var target: String?
        var primary: Bool
        var indexed: Bool
        var origin: String?
        /// The delete rule when it is not ``DeleteRule/nullify`` (absent otherwise, so files
        /// without rules are written as before format 5).
        var onDelete: String?

        /// `p` as stored: under its column name (see ``ObjectBase/propertiesMapping()``).
        init(_ p: Property) {
            name = p.columnName
            type = p.type.rawValue
            optional = p.isOptional
            collection = p.collection
            target = p.objectClassName
            primary = p.isPrimary
            indexed = p.isIndexed
            origin = p.linkOriginPropertyName
            onDelete = p.deleteRule == .nullify ? nil : p.deleteRule.rawValue
        }

        /// The property as the file names it (a Realm without the model class sees this).
        var property: Property {
            Property(name: name, type: PropertyType(rawValue: type) ?? .any, isOptional: optional,
                     collection: collection, isIndexed: indexed, isPrimary: primary, objectClassName: target,
                     linkOriginPropertyName: origin,
                     deleteRule: onDelete.flatMap(DeleteRule.init(rawValue:)) ?? .nullify)
        }
    }

    struct StoredClass: Codable, Equatable {
        var name: String
        var tableId: UInt32
        var embedded: Bool
        var properties: [StoredProperty]
        var computed: [StoredProperty]
        /// The mangled name of the Swift class that last stored this class's schema (absent in
        /// files written before Trellis recorded it). Lets a Realm opened without `objectTypes`
        /// find the model classes of the file, which Linux cannot list (``SchemaBinder``).
        var swiftType: String?

        var objectSchema: ObjectSchema {
            ObjectSchema(className: name, properties: properties.map(\.property),
                         computedProperties: computed.map(\.property), isEmbedded: embedded)
        }
    }

    var format: Int = formatVersion
    /// log2 of the objects per column chunk; nil in files of format 2 (no column copies).
    var columnShift: Int? = SchemaCatalog.defaultColumnShift

    /// The chunk size of the column copies, if this file keeps them.
    var keptColumnShift: Int? { format >= 3 ? columnShift : nil }
    var schemaVersion: UInt64 = 0
    var nextTableId: UInt32 = 1
    var classes: [StoredClass] = []

    func storedClass(named name: String) -> StoredClass? {
        classes.first { $0.name == name }
    }

    mutating func add(_ info: ClassInfo) -> UInt32 {
        let id = nextTableId
        nextTableId += 1
        classes.append(StoredClass(name: info.className, tableId: id, embedded: info.isEmbedded,
                                   properties: Self.storedProperties(of: info),
                                   computed: Self.storedComputedProperties(of: info),
                                   swiftType: Self.swiftTypeName(of: info)))
        noteDeleteRules()
        return id
    }

    /// Records format 5 once a property carries a delete rule (see ``formatVersion``), in a
    /// file of an older format (files of format 6 and later have it already).
    mutating func noteDeleteRules() {
        let hasRules = classes.contains { $0.properties.contains { $0.onDelete != nil } }
        if hasRules, format < 5 { format = 5 }
    }

    /// The stored properties of `info` as the file records them: by column name.
    static func storedProperties(of info: ClassInfo) -> [StoredProperty] {
        info.objectSchema.properties.map(StoredProperty.init)
    }

    /// The LinkingObjects of `info` as the file records them: the origin property by its
    /// column name, so a Realm without the model classes follows the stored link.
    static func storedComputedProperties(of info: ClassInfo) -> [StoredProperty] {
        info.fields.filter(\.isLinkingObjects).map { field in
            var stored = StoredProperty(field.property)
            if let origin = field.originProperty, let originType = field.typeInfo.objectType,
               let originField = ClassInfo.unbound(for: originType).field(named: origin)
            {
                stored.origin = originField.columnName
            }
            return stored
        }
    }

    /// The name ``modelClass(of:)`` finds `info`'s class by; nil for a class known only by a
    /// file's stored schema.
    static func swiftTypeName(of info: ClassInfo) -> String? {
        guard info.objectType != ObjectBase.self, info.objectType.className() == info.className else { return nil }
        return _mangledTypeName(info.objectType)
    }

    /// The model class that stored `stored`, if this program has it (same mangled name, same
    /// Realm class name).
    static func modelClass(of stored: StoredClass) -> ObjectBase.Type? {
        guard let name = stored.swiftType, let type = _typeByName(name) as? ObjectBase.Type,
              type.className() == stored.name
        else { return nil }
        return type
    }

    /// Records the model classes' Swift names; returns whether any changed.
    mutating func recordSwiftTypes(of models: [ClassInfo]) -> Bool {
        var changed = false
        for info in models {
            guard let name = Self.swiftTypeName(of: info),
                  let index = classes.firstIndex(where: { $0.name == info.className }),
                  classes[index].swiftType != name
            else { continue }
            classes[index].swiftType = name
            changed = true
        }
        return changed
    }

    /// The differences between the stored class and a model, one line each (empty if equal).
    /// Whether two type descriptions (`"int"`, `"string?"`, `"array<Dog>"`) are the same but
    /// for their `?`s. Byte by byte: Foundation's `replacingOccurrences` cost ~12K instructions a
    /// call, and every open compares every property several times.
    static func sameTypeIgnoringOptionality(_ a: String, _ b: String) -> Bool {
        let question = UInt8(ascii: "?")
        return a.utf8.lazy.filter { $0 != question }.elementsEqual(b.utf8.lazy.filter { $0 != question })
    }

    static func differences(stored: StoredClass, model: ClassInfo) -> [String] {
        var lines = [String]()
        let cls = stored.name
        if stored.embedded != model.isEmbedded {
            lines.append("Class '\(cls)' changed from \(stored.embedded ? "embedded" : "top-level") to "
                + "\(model.isEmbedded ? "embedded" : "top-level").")
        }
        // Matched by the name in the file: a property's column name (propertiesMapping()).
        let modelProps = model.objectSchema.properties
        let storedNames = stored.properties.map(\.name), modelNames = modelProps.map(\.columnName)
        for name in storedNames where !modelNames.contains(name) {
            lines.append("Property '\(cls).\(name)' has been removed.")
        }
        for p in modelProps where !storedNames.contains(p.columnName) {
            let mapped = p.columnName == p.name ? "" : " (stored as '\(p.columnName)')"
            lines.append("Property '\(cls).\(p.name)'\(mapped) has been added.")
        }
        for p in modelProps {
            guard let s = stored.properties.first(where: { $0.name == p.columnName })?.property else { continue }
            if !Self.sameTypeIgnoringOptionality(s.typeDescription, p.typeDescription) {
                lines.append("Property '\(cls).\(p.name)' has been changed from '\(s.typeDescription)' to "
                    + "'\(p.typeDescription)'.")
            } else if s.isOptional != p.isOptional {
                lines.append("Property '\(cls).\(p.name)' has been made \(p.isOptional ? "optional" : "required").")
            }
            if s.isPrimary != p.isPrimary {
                lines.append("Primary key property '\(cls).\(p.isPrimary ? p.name : s.name)' has been "
                    + "\(p.isPrimary ? "added" : "removed").")
            }
            if s.deleteRule != p.deleteRule {
                lines.append("Property '\(cls).\(p.name)' delete rule has been changed from '\(s.deleteRule.rawValue)' to "
                    + "'\(p.deleteRule.rawValue)'.")
            }
        }
        return lines
    }

    /// The properties whose index the model adds or removes, one line each. Not a difference
    /// that needs a migration: as in Realm (realm-core's AddIndex/RemoveIndex), opening the file
    /// writable builds or drops the index (``SchemaBinder``), with the schema version as it is.
    static func indexChanges(stored: StoredClass, model: ClassInfo) -> [String] {
        model.objectSchema.properties.compactMap { p in
            guard let s = stored.properties.first(where: { $0.name == p.columnName }), s.primary == p.isPrimary,
                  !p.isPrimary, s.indexed != p.isIndexed
            else { return nil }
            return "Property '\(stored.name).\(p.name)' has been made \(p.isIndexed ? "indexed" : "unindexed")."
        }
    }

    /// The column names of the stored class's indexed properties (its primary key included).
    static func indexedColumns(of stored: StoredClass) -> Set<String> {
        Set(stored.properties.filter(\.indexed).map(\.name))
    }

    /// The classes of `models` that opening rewrites without a migration: properties only in
    /// another order, or only indexes added or removed (nothing else differs).
    func rewrittenClasses(_ models: [ClassInfo]) -> [String] {
        models.filter { info in
            guard let stored = storedClass(named: info.className),
                  Self.differences(stored: stored, model: info).isEmpty
            else { return false }
            return Self.isReordered(stored: stored, model: info) || !Self.indexChanges(stored: stored, model: info).isEmpty
        }.map(\.className)
    }

    /// Whether a migration (or the rewrite of ``rewrittenClasses(_:)``) writes the class's
    /// objects again: anything differs, the order, or an index.
    static func needsRewrite(stored: StoredClass, model: ClassInfo) -> Bool {
        !differences(stored: stored, model: model).isEmpty || isReordered(stored: stored, model: model)
            || !indexChanges(stored: stored, model: model).isEmpty
    }

    /// Whether the model declares the stored class's properties in another order (and nothing
    /// else differs): properties are matched by name, so opening rewrites the class's rows in
    /// the new order instead of asking for a migration (see ``SchemaBinder``).
    static func isReordered(stored: StoredClass, model: ClassInfo) -> Bool {
        stored.properties.map(\.name) != model.objectSchema.properties.map(\.columnName)
            && differences(stored: stored, model: model).isEmpty
    }

    /// The classes of `models` whose stored properties are only in another order.
    func reorderedClasses(_ models: [ClassInfo]) -> [String] {
        models.filter { info in storedClass(named: info.className).map { Self.isReordered(stored: $0, model: info) } ?? false }
            .map(\.className)
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(self))) ?? []
    }

    /// The catalog stored as `bytes`: read by ``read(_:)``, or by `JSONDecoder` where that
    /// reader meets what it does not expect.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> SchemaCatalog? {
        read(bytes) ?? (try? JSONDecoder().decode(SchemaCatalog.self, from: Data(bytes)))
    }
}
