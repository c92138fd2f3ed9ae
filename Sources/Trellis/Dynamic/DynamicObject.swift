import Foundation

/// An object read and written by property name, without its model class: what
/// ``Realm/dynamicObjects(_:)``, ``Realm/dynamicObject(ofType:forPrimaryKey:)`` and
/// ``Realm/dynamicCreate(_:value:update:)`` return, as in Realm.
///
/// ```swift
/// let realm = try Realm(configuration: Realm.Configuration(fileURL: url))  // no objectTypes
/// for dog in realm.dynamicObjects("Dog").filter("age > 2") {
///     print(dog.name as? String ?? "", dog["age"] as? Int ?? 0)
///     let owner = dog.owner as? DynamicObject        // no Owner class here: a DynamicObject
/// }
/// try realm.write { realm.dynamicCreate("Dog", value: ["name": "Rex", "age": 3]) }
/// ```
///
/// Reading a property gives its value (`Int`, `String`, `Date`, … or nil); for a to-one link,
/// the target as an object of the Realm's model class for it when the Realm has one that
/// matches the file (as in Realm: `dog["owner"] as? Person`), else a `DynamicObject`;
/// `List<DynamicObject>`/`MutableSet<DynamicObject>`/`Map<String, DynamicObject?>` for
/// collections of objects, `List<Int>`, `MutableSet<String>`, … for collections of values,
/// and `LinkingObjects<DynamicObject>` for backlinks. Setting one (inside a write transaction)
/// checks the value against the property's type. An unknown name traps with Realm's message.
///
/// The class is the one stored in the file, so a file written by another program can be read
/// and written without its model classes.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// Set on the objects a migration block is handed (``MigrationObject``): they read and
    /// write the migration's values instead of a row.
    var migrationEntry: MigrationEntry?
    /// Set on the unmanaged object a list or set of a damaged file reads for a link to a missing
    /// row (see ``MissingLinkTarget``): its class's properties with their defaults.
    var missingTarget: MissingTargetValues?

    /// False: `DynamicObject` is no model class, as in Realm.
    public override class func shouldIncludeInDefaultSchema() -> Bool { false }

    /// `object.name`: the same as `object["name"]`.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// Reads or writes a property by name; an unknown name traps.
    public override subscript(key: String) -> Any? {
        get {
            if let entry = migrationEntry {
                // Realm hands a migration's integers out as NSNumber: `oldObject["int8"] as! Int8`
                // and `as! Int` both cast (the file stores every integer size alike).
                let value = entry.migrator.read(key, of: entry)
                if let integer = value as? Int { return NSNumber(value: integer) }
                return KeyValueCoding.dynamicValue(value)
            }
            if let missingTarget { return missingTarget.value(key) }
            return super[key]
        }
        set {
            if let entry = migrationEntry { return entry.migrator.write(key, of: entry, value: newValue) }
            if let missingTarget { return missingTarget.set(key, newValue) }
            super[key] = newValue
        }
    }

    /// The class name and the property values.
    public override var description: String {
        migrationEntry?.description ?? missingTarget?.description ?? super.description
    }

    /// The schema of the object's class: for a migration's old object, as stored in the file;
    /// for a new one, the model's.
    public override var objectSchema: ObjectSchema {
        if let missingTarget { return missingTarget.info.objectSchema }
        guard let entry = migrationEntry else { return super.objectSchema }
        let schema = entry.isOld ? entry.migrator.oldSchema : entry.migrator.newSchema
        return schema[entry.record.className] ?? super.objectSchema
    }
}

extension Object {
    /// The `List` of objects named `propertyName`, as a list of ``DynamicObject``s: the same
    /// stored list, live, readable and writable without the target's model class.
    ///
    /// Traps when the object is unmanaged, or the property is not a list. As in Realm, a list of
    /// values (`List<Int>`) is taken too: it counts, but reading or adding an element traps
    /// (read such a list as `object[propertyName] as? List<Int>`).
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        List(binding: dynamicCollectionBinding(propertyName, .list, "a List"))
    }

    /// The `MutableSet` of objects named `propertyName`, as a set of ``DynamicObject``s.
    ///
    /// Traps when the object is unmanaged, or the property is not a set (a set of values counts,
    /// as in Realm, but its elements cannot be read or added this way).
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        MutableSet(binding: dynamicCollectionBinding(propertyName, .set, "a MutableSet"))
    }

    /// The `Map` of objects named `propertyName`, with ``DynamicObject`` values.
    ///
    /// Traps when the object is unmanaged, or the property is not a map (a map of values counts,
    /// as in Realm, but its values cannot be read or set this way).
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        Map(binding: dynamicCollectionBinding(propertyName, .map, "a Map"))
    }
}

extension ObjectBase {
    /// The binding of the collection property `propertyName` of this managed object (an
    /// ``Object``'s `dynamicList`/`dynamicMutableSet`/`dynamicMap`, and TrellisSync's access
    /// to an embedded object's collections); traps when unmanaged or of another kind.
    func dynamicCollectionBinding(_ propertyName: String, _ kind: CollectionKind, _ what: String)
        -> CollectionBinding
    {
        guard let managed = _managed else {
            throwRealmException("Dynamic collections are only available on managed objects: add "
                + "'\(type(of: self).className())' to a Realm first.")
        }
        guard let field = managed.info.field(named: propertyName) else {
            throwRealmException("Invalid property name '\(propertyName)' for class '\(managed.info.className)'.")
        }
        guard field.typeInfo.collection == kind else {
            throwRealmException("Property '\(managed.info.className).\(propertyName)' is not \(what).")
        }
        return CollectionBinding(object: self, field: field)
    }
}
