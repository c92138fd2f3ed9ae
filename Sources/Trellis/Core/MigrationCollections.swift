import Foundation

/// The collections a migration's objects hand out for their list, set and map properties, as
/// in Realm: `List<DynamicObject>` (`List<MigrationObject>`), `List<Int>`, `MutableSet<…>`,
/// `Map<String, …>`, each of the element type the property stores.
///
/// They are live, as Realm's are: `(newObject["dogs"] as! List<MigrationObject>).append(dog)`
/// changes the object. A migration keeps its values in memory (``MigrationRecord``), not in
/// rows, so each property's collection is made once, from the record's value, and kept here;
/// setting the property refills it (a collection read before sees the new elements), and the
/// migrator reads every collection back into its record before the objects are written
/// (``Migrator/write()``). The old objects' collections are copies: old objects are read-only.
final class MigrationCollections {
    private struct Key: Hashable {
        let record: ObjectIdentifier
        let name: String
    }

    private struct Entry {
        let record: MigrationRecord
        let name: String
        let property: Property
        let collection: AnyObject
    }

    private var entries: [Key: Entry] = [:]

    /// The collection a new object hands out for `name`, if one was handed out.
    func handedOut(_ record: MigrationRecord, _ name: String) -> AnyObject? {
        entries[Key(record: ObjectIdentifier(record), name: name)]?.collection
    }

    /// Keeps `collection` as the one `record` hands out for `name`.
    func keep(_ collection: AnyObject, _ record: MigrationRecord, _ name: String, _ property: Property) {
        entries[Key(record: ObjectIdentifier(record), name: name)] =
            Entry(record: record, name: name, property: property, collection: collection)
    }

    /// Calls `body` with each collection handed out by an object not deleted: the migrator
    /// stores its elements in the record.
    func forEachKept(_ body: (_ record: MigrationRecord, _ name: String, _ property: Property, _ collection: AnyObject)
        -> Void)
    {
        for entry in entries.values where !entry.record.isDeleted {
            body(entry.record, entry.name, entry.property, entry.collection)
        }
    }

    /// A new, unmanaged collection of the property's element type holding `elements` (the
    /// keys are a map's; nil for a list or set).
    static func make(_ property: Property, _ elements: [(key: String, value: Any?)]) -> AnyObject? {
        guard let builder = DynamicFieldTypes.witness(for: property) as? any MigrationCollectionBuilding.Type else {
            return nil
        }
        let collection = builder.emptyCollection(property.collection)
        builder.refill(collection, with: elements)
        return collection
    }

    /// Replaces the elements of a collection made by ``make(_:_:)``.
    static func refill(_ collection: AnyObject, _ property: Property, with elements: [(key: String, value: Any?)]) {
        guard let builder = DynamicFieldTypes.witness(for: property) as? any MigrationCollectionBuilding.Type else {
            return
        }
        builder.refill(collection, with: elements)
    }
}

/// Makes and fills the unmanaged collections of one element type (see ``MigrationCollections``).
protocol MigrationCollectionBuilding {
    static func emptyCollection(_ kind: CollectionKind) -> AnyObject
    static func refill(_ collection: AnyObject, with elements: [(key: String, value: Any?)])
}

extension DynamicFieldWitness: MigrationCollectionBuilding {
    static func emptyCollection(_ kind: CollectionKind) -> AnyObject {
        switch kind {
        case .set: MutableSet<Value>()
        case .map: Map<String, Value>()
        default: List<Value>()
        }
    }

    static func refill(_ collection: AnyObject, with elements: [(key: String, value: Any?)]) {
        // Elements that are no value of the type (none: they come from the record, whose values
        // were checked when set) are left out rather than trapped on.
        let values = elements.compactMap { element in
            ValueConversion.convert(element.value, to: Value.self).map { (key: element.key, value: $0) }
        }
        if let list = collection as? List<Value> {
            list.removeAll()
            list.append(objectsIn: values.map(\.value))
        } else if let set = collection as? MutableSet<Value> {
            set.removeAll()
            set.insert(objectsIn: values.map(\.value))
        } else if let map = collection as? Map<String, Value> {
            map.removeAll()
            for entry in values { map[entry.key] = entry.value }
        }
    }
}

/// A map's entries by key, for storing a `Map` a migration's object handed out or was given.
protocol MigrationMapEntries {
    var migrationEntries: [String: Any] { get }
}

extension Map: MigrationMapEntries where Key == String {
    var migrationEntries: [String: Any] {
        Dictionary(entries.map { ($0.key, $0.value as Any) }, uniquingKeysWith: { _, last in last })
    }
}
