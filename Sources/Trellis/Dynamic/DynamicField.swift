import Foundation

/// The Swift type a dynamic property's values have, chosen from its stored type.
enum DynamicFieldTypes {
    /// The witness reading and writing a property of this type by name.
    static func witness(for property: Property) -> any PersistedFieldWitness.Type {
        let optional = property.isOptional
        switch property.type {
        case .int: return optional ? DynamicFieldWitness<Int?>.self : DynamicFieldWitness<Int>.self
        case .bool: return optional ? DynamicFieldWitness<Bool?>.self : DynamicFieldWitness<Bool>.self
        case .float: return optional ? DynamicFieldWitness<Float?>.self : DynamicFieldWitness<Float>.self
        case .double: return optional ? DynamicFieldWitness<Double?>.self : DynamicFieldWitness<Double>.self
        case .string: return optional ? DynamicFieldWitness<String?>.self : DynamicFieldWitness<String>.self
        case .data: return optional ? DynamicFieldWitness<Data?>.self : DynamicFieldWitness<Data>.self
        case .date: return optional ? DynamicFieldWitness<Date?>.self : DynamicFieldWitness<Date>.self
        case .objectId: return optional ? DynamicFieldWitness<ObjectId?>.self : DynamicFieldWitness<ObjectId>.self
        case .decimal128:
            return optional ? DynamicFieldWitness<Decimal128?>.self : DynamicFieldWitness<Decimal128>.self
        case .UUID: return optional ? DynamicFieldWitness<UUID?>.self : DynamicFieldWitness<UUID>.self
        case .any: return DynamicFieldWitness<AnyRealmValue>.self
        case .object, .linkingObjects:
            // Lists and sets hold objects; maps and to-one links may hold nil.
            return property.collection == .list || property.collection == .set || property.type == .linkingObjects
                ? DynamicFieldWitness<DynamicObject>.self : DynamicFieldWitness<DynamicObject?>.self
        }
    }

    /// Realm's name of a property's type in messages: `int`, `string?`, `array<Dog>`.
    static func swiftName(of property: Property) -> String {
        let element = property.type == .object || property.type == .linkingObjects
            ? property.objectClassName ?? "object" : "\(property.type)"
        let optional = property.isOptional && property.type != .object ? "?" : ""
        switch property.collection {
        case .none: return element + optional
        case .list: return "array<\(element)\(optional)>"
        case .set: return "set<\(element)\(optional)>"
        case .map: return "dictionary<string, \(element)\(optional)>"
        }
    }
}

/// The value a property of a ``DynamicObject`` placeholder reads before it is set (see
/// ``MissingLinkTarget``).
protocol DynamicDefaultValue {
    static func defaultValue(_ field: FieldInfo) -> Any?
}

extension DynamicFieldWitness: DynamicDefaultValue {
    /// What a new object holds: an empty unmanaged collection, nil for a link or an optional,
    /// the type's default (0, "", …) for other values.
    static func defaultValue(_ field: FieldInfo) -> Any? {
        if field.isLinkingObjects {
            return LinkingObjects<DynamicObject>(fromType: DynamicObject.self, property: field.originProperty ?? "")
        }
        switch field.typeInfo.collection {
        case .list: return List<Value>()
        case .set: return MutableSet<Value>()
        case .map: return Map<String, Value>()
        case .none: break
        }
        if field.isLink { return nil }
        return ValueConversion.unwrapped(Value._trellisDefaultValue())
    }
}

/// Reads and writes a property of a ``DynamicObject`` by name: `Value` is the Swift type of
/// its values (of its elements for a collection; `DynamicObject` for links).
enum DynamicFieldWitness<Value: RealmCollectionValue>: PersistedFieldWitness {
    private static func noUnmanagedStorage() -> Never {
        throwRealmException("A DynamicObject has no unmanaged properties: create it in a Realm with "
            + "dynamicCreate(_:value:update:).")
    }

    static var valueTypeInfo: _PropertyTypeInfo { Value._trellisTypeInfo }
    /// Dynamic properties are read by name (`dynamicGet`), never through `Persisted`.
    static var cachedAccessorType: (any _CachedAccessor.Type)? { nil }
    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration { noUnmanagedStorage() }
    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        noUnmanagedStorage()
    }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { noUnmanagedStorage() }
    static func isUntouched(at field: UnsafeRawPointer) -> Bool { noUnmanagedStorage() }
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool { noUnmanagedStorage() }
    static func markManaged(at field: UnsafeMutableRawPointer) {}
    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {
        noUnmanagedStorage()
    }

    /// A scalar's value (nil when null); a link's target is not known without its field, so an
    /// observed link's old and new values read as nil.
    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? {
        if Value._trellisIsDynamicObject { return nil }
        return ValueConversion.unwrapped(Value._trellisRead(_RowReader(row: row, core: core), column))
    }

    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? {
        guard let managed = object._managed else { noUnmanagedStorage() }
        let core = managed.core
        if field.isLinkingObjects {
            return LinkingObjects<DynamicObject>(results: Results(
                core: core, source: .linkingObjects(target: managed.table, key: managed.key,
                                                    originProperty: field.originProperty ?? "")))
        }
        switch field.typeInfo.collection {
        case .list: return List<Value>(binding: CollectionBinding(object: object, field: field))
        case .set: return MutableSet<Value>(binding: CollectionBinding(object: object, field: field))
        case .map: return Map<String, Value>(binding: CollectionBinding(object: object, field: field))
        case .none: break
        }
        let row = core.row(of: object, managed)
        if field.isLink {
            guard !row.isNull(field.rowColumn), let target = field.typeInfo.objectClassName else { return nil }
            let key = row.slot(field.rowColumn)
            if let model = core.linkTargetModel(named: target), let object = core.linkedAccessor(model, key: key) {
                return object
            }
            // A link to a missing row (only a damaged file has one) reads as nil, as a typed
            // to-one link does.
            guard let table = core.dynamicTable(named: target, create: false), core.rowView(table, key) != nil else {
                MissingLinkTarget.report(core, className: target, key: key)
                return nil
            }
            return core.accessor(DynamicObject.self, table: table, key: key)
        }
        return ValueConversion.unwrapped(Value._trellisRead(_RowReader(row: row, core: core), field.rowColumn))
    }

    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) {
        guard let managed = object._managed else { noUnmanagedStorage() }
        let writer = DynamicWriter(core: managed.core, policy: managed.core.propertyUpdatePolicy)
        if field.isLink, field.typeInfo.collection == .none {
            writer.setLink(of: managed, field, to: value)
            return
        }
        if field.typeInfo.collection != .none {
            writer.replaceCollection(of: object, managed, field, with: value, as: Value.self)
            return
        }
        guard let converted = ValueConversion.convert(value, to: Value.self) else {
            DynamicWriter.invalidValue(value, for: field, in: managed.info)
        }
        managed.core.setProperty(of: object, managed, field, value: converted)
    }
}
