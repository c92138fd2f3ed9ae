import Foundation

/// Writes objects by property name, for ``DynamicObject`` and
/// ``Realm/dynamicCreate(_:value:update:)``: values are checked against the stored
/// property types, links resolve to objects of this Realm or create new ones from
/// dictionaries, arrays or unmanaged objects (embedded targets always new).
struct DynamicWriter {
    let core: RealmCore
    let policy: Realm.UpdatePolicy

    // MARK: - Creating

    /// Creates an object of class `info` from `value` (a dictionary, an array in property
    /// order, or an object), or with `.modified`/`.all` updates the one with the same primary
    /// key; returns its key.
    func create(_ info: ClassInfo, value: Any) -> ObjectKey {
        core.verifyInWrite(Realm.addRequiresWriteMessage)
        guard let table = core.dynamicTable(named: info.className, create: true) else {
            throwRealmException("Could not create the table of '\(info.className)' in '\(core.environmentPath)'.")
        }
        let values = propertyValues(of: value, for: info)
        if let pkField = info.primaryKeyField {
            let pk = values[pkField.name].map { payload($0, for: pkField, of: info) } ?? defaultPayload(pkField)
            if policy != .error, let existing = core.lookUpPrimaryKey(table, pk) {
                update(core.accessor(DynamicObject.self, table: table, key: existing), with: values, of: info)
                return existing
            }
            let key = core.allocateKey(in: table)
            if !core.insertPrimaryKey(table, pk, key: key) {
                throwRealmException("Attempting to create an object of type '\(info.className)' with an existing "
                    + "primary key value '\(PrimaryKeyEncoding.describe(pk))'.")
            }
            // The row holds the key the index was given: a default (a new ObjectId, UUID…) is
            // made once, not once for the index and again for the row.
            insert(values, into: table, key: key, info: info, primaryKey: pk)
            return key
        }
        let key = core.allocateKey(in: table)
        insert(values, into: table, key: key, info: info)
        return key
    }

    /// Writes a new row, then the collections `values` gives. `primaryKey` is the stored primary
    /// key already put in the primary-key index, if the class has one.
    private func insert(
        _ values: [String: Any], into table: Table, key: ObjectKey, info: ClassInfo,
        primaryKey: _StoredValue.Payload? = nil
    ) {
        let row: [_StoredValue.Payload] = info.storedFields.map { field in
            if field.typeInfo.collection != .none { return .none }
            if field.isPrimaryKey, let primaryKey { return primaryKey }
            guard let value = values[field.name] else { return defaultPayload(field) }
            return field.isLink ? linkPayload(value, for: field, of: info) : payload(value, for: field, of: info)
        }
        core.writeRow(table, key: key, values: row, isNew: true)
        let object = core.accessor(DynamicObject.self, table: table, key: key)
        for field in info.storedFields where field.typeInfo.collection != .none {
            if let value = values[field.name] { field.witness.dynamicSet(object, field, value) }
        }
    }

    /// Sets each property `values` gives, except the primary key.
    private func update(_ object: DynamicObject, with values: [String: Any], of info: ClassInfo) {
        for field in info.storedFields where !field.isPrimaryKey {
            if let value = values[field.name] { field.witness.dynamicSet(object, field, value) }
        }
    }

    /// The values `value` gives by property name: a dictionary's entries, an array's elements
    /// in property order, or an object's properties.
    private func propertyValues(of value: Any, for info: ClassInfo) -> [String: Any] {
        if let dictionary = value as? [String: Any] { return dictionary }
        if let object = value as? ObjectBase {
            let source = object._managed?.info ?? ClassInfo.unbound(for: type(of: object))
            var values = [String: Any]()
            for field in info.storedFields where source.field(named: field.name) != nil {
                values[field.name] = object[field.name] ?? NSNull()
            }
            return values
        }
        if let array = value as? [Any] {
            guard array.count == info.storedFields.count else {
                throwRealmException("Invalid array input: number of supplied values (\(array.count)) does not match "
                    + "number of properties (\(info.storedFields.count)) of '\(info.className)'.")
            }
            return Dictionary(uniqueKeysWithValues: zip(info.storedFields.map(\.name), array))
        }
        throwRealmException("Invalid value '\(value)' to initialize object of type '\(info.className)': give a "
            + "dictionary of property values, an array of them in property order, or an object.")
    }

    // MARK: - Links

    /// Sets a to-one link of a managed object.
    func setLink(of managed: ManagedObject, _ field: FieldInfo, to value: Any?) {
        core.verifyInWrite()
        guard managed.epoch == core.epoch, let row = core.rowView(managed.table, managed.key) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        if field.isEmbeddedLink, let object = ValueConversion.unwrapped(value) as? ObjectBase,
           let target = object._managed, target.core === core, !row.isNull(field.rowColumn),
           row.slot(field.rowColumn) == target.key
        {
            return  // the embedded object this property already holds
        }
        let link = linkPayload(value, for: field, of: managed.info)
        core.updateColumn(managed.table, key: managed.key, field: field, value: link)
    }

    /// The stored link for `value`: nil, an object of this Realm of the target class, or a new
    /// object made from a dictionary, an array or an unmanaged object.
    func linkPayload(_ value: Any?, for field: FieldInfo, of owner: ClassInfo) -> _StoredValue.Payload {
        guard let value = ValueConversion.unwrapped(value) else { return .null }
        return .link(linkedKey(value, for: field, of: owner))
    }

    /// The key of the object `value` stands for in a link or collection of `field`.
    func linkedKey(_ value: Any, for field: FieldInfo, of owner: ClassInfo) -> ObjectKey {
        guard let targetName = field.typeInfo.objectClassName else {
            throwRealmException("Trellis internal error: '\(owner.className).\(field.name)' has no target class.")
        }
        if let object = value as? ObjectBase, let managed = object._managed {
            guard managed.core === core else {
                throwRealmException("Object is already managed by another Realm. Use create instead to copy it into "
                    + "this Realm.")
            }
            guard managed.info.className == targetName else {
                throwRealmException("Can't set object of type '\(managed.info.className)' to property of type "
                    + "'\(targetName)'")
            }
            guard core.objectExists(managed) else { throwRealmException("Object has been deleted or invalidated.") }
            if field.isEmbeddedLink {
                throwRealmException("Cannot set a link to an existing managed embedded object")
            }
            return managed.key
        }
        guard value is [String: Any] || value is [Any] || value is ObjectBase else {
            Self.invalidValue(value, for: field, in: owner)
        }
        return create(core.requireDynamicClassInfo(named: targetName), value: value)
    }

    // MARK: - Collections

    /// Replaces the contents of a collection property with the elements of `value` (an
    /// array, another collection, or for a map a dictionary); nil empties it.
    func replaceCollection<Element: RealmCollectionValue>(of object: ObjectBase, _ managed: ManagedObject,
                                                          _ field: FieldInfo, with value: Any?,
                                                          as _: Element.Type)
    {
        core.verifyInWrite()
        let binding = CollectionBinding(object: object, field: field)
        binding.verifyWritable("a collection")
        let value = ValueConversion.unwrapped(value)
        switch field.typeInfo.collection {
        case .map:
            let entries: [(String, Any)]
            if let dictionary = value as? [String: Any] {
                entries = dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            } else if let map = value as? Map<String, Element> {
                entries = map.map { ($0.key, $0.value as Any) }
            } else if value == nil {
                entries = []
            } else {
                Self.invalidValue(value, for: field, in: managed.info)
            }
            let converted = entries.map { ($0.0, element($0.1, Element.self, field, managed.info)) }
            let map = Map<String, Element>(binding: binding)
            map.removeAll()
            for (key, element) in converted { map[key] = element }
        case .list, .set:
            guard let items = value == nil ? [] : CollectionConversion.items(of: value as Any) else {
                Self.invalidValue(value, for: field, in: managed.info)
            }
            let converted = items.map { element($0, Element.self, field, managed.info) }
            if field.typeInfo.collection == .list {
                let list = List<Element>(binding: binding)
                list.removeAll()
                list.append(objectsIn: converted)
            } else {
                let set = MutableSet<Element>(binding: binding)
                set.removeAll()
                set.insert(objectsIn: converted)
            }
        case .none:
            break
        }
    }

    /// One element for a collection of `field`: a value converted to its type, or for objects
    /// the `DynamicObject` of an object of this Realm or of one made from a dictionary.
    private func element<Element: RealmCollectionValue>(_ item: Any, _: Element.Type, _ field: FieldInfo,
                                                        _ owner: ClassInfo) -> Element
    {
        if field.isLink, let targetName = field.typeInfo.objectClassName {
            if ValueConversion.unwrapped(item) == nil, let none = Optional<DynamicObject>.none as? Element {
                return none
            }
            let key = linkedKey(item, for: field, of: owner)
            guard let element = core.dynamicAccessor(className: targetName, key: key) as? Element else {
                throwRealmException("Trellis internal error: '\(owner.className).\(field.name)' holds no objects.")
            }
            return element
        }
        guard let converted = ValueConversion.convert(item, to: Element.self) else {
            Self.invalidValue(item, for: field, in: owner)
        }
        return converted
    }

    // MARK: - Values

    /// The stored form of a scalar value for `field`; traps with Realm's message when it does
    /// not fit.
    func payload(_ value: Any?, for field: FieldInfo, of owner: ClassInfo) -> _StoredValue.Payload {
        guard let encoder = field.witness as? any DynamicPayloadEncoding.Type,
              let payload = encoder.payload(value, core: core)
        else {
            Self.invalidValue(value, for: field, in: owner)
        }
        return payload
    }

    /// What a new object holds for a property its value leaves out: nil, or the type's zero.
    private func defaultPayload(_ field: FieldInfo) -> _StoredValue.Payload {
        if field.isLink { return .null }
        guard let encoder = field.witness as? any DynamicPayloadEncoding.Type else { return .null }
        return encoder.defaultPayload(core: core)
    }

    /// Traps with Realm's message for a value that does not fit a property.
    static func invalidValue(_ value: Any?, for field: FieldInfo, in info: ClassInfo) -> Never {
        let text = value.map { "\($0)" } ?? "nil"
        let type = value.map { "\(Swift.type(of: $0))" } ?? "nil"
        throwRealmException("Invalid value '\(text)' of type '\(type)' for '\(field.typeInfo.swiftName)' property "
            + "'\(info.className).\(field.name)'.")
    }
}

/// How a dynamic property's witness stores loosely typed values.
protocol DynamicPayloadEncoding {
    /// The stored form of `value`, or nil when it does not fit the property's type.
    static func payload(_ value: Any?, core: RealmCore) -> _StoredValue.Payload?
    /// The stored form of the type's default value (0, "", nil, a new ObjectId, …).
    static func defaultPayload(core: RealmCore) -> _StoredValue.Payload
}

extension DynamicFieldWitness: DynamicPayloadEncoding {
    static func payload(_ value: Any?, core: RealmCore) -> _StoredValue.Payload? {
        guard let converted = ValueConversion.convert(value, to: Value.self) else { return nil }
        let context = _EncodingContext(session: AddSession(core: core, policy: .error))
        return Value._trellisEncode(converted, context).payload
    }

    static func defaultPayload(core: RealmCore) -> _StoredValue.Payload {
        let context = _EncodingContext(session: AddSession(core: core, policy: .error))
        return Value._trellisEncode(Value._trellisDefaultValue(), context).payload
    }
}
