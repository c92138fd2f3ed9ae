import Foundation

/// A property that may hold a value of any supported type, a link to any object, or a list or
/// dictionary of such values nested to any depth (Realm's "mixed"). `.none` is its nil; the
/// property itself is never optional.
///
/// ```swift
/// object.anyCol = .fromArray([.int(1), .fromDictionary(["name": .string("Rex")])])
/// try realm.write { object.anyCol.listValue?[1].dictionaryValue?["age"] = .int(3) }
/// ```
///
/// Equality follows Realm: scalars compare by value, objects as `Object` does, unmanaged
/// nested collections by their contents, managed ones by identity (the same stored collection).
public enum AnyRealmValue: Hashable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)
    /// A dictionary of values (Realm 10.51+).
    case dictionary(Map<String, AnyRealmValue>)
    /// A list of values (Realm 10.51+).
    case list(List<AnyRealmValue>)

    /// `.none` (also what `AddableType` requires).
    public init() { self = .none }

    /// The value if it is an integer, else nil.
    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    /// The value if it is a Bool, else nil.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The value if it is a Float, else nil.
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    /// The value if it is a Double, else nil.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The value if it is a string, else nil.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The value if it is Data, else nil.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The value if it is a date, else nil.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The value if it is an ObjectId, else nil.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    /// The value if it is a Decimal128, else nil.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    /// The value if it is a UUID, else nil.
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }

    /// The linked object as `T`, or nil.
    public func object<T: Object>(_ objectType: T.Type) -> T? {
        if case .object(let object) = self { return object as? T }
        return nil
    }

    /// The linked object as a ``DynamicObject`` (read by property name, whatever its class), or
    /// nil when the value is not an object. Realm's accessor for objects of a class this program
    /// has no model for. A managed object is the same row seen through a dynamic accessor; an
    /// unmanaged object that is not a `DynamicObject` gives nil (it has no row to read).
    public var dynamicObject: DynamicObject? {
        guard case .object(let object) = self else { return nil }
        if let dynamic = object as? DynamicObject { return dynamic }
        guard let managed = object._managed, !object.isInvalidated else { return nil }
        return managed.core.dynamicAccessor(className: managed.info.className, key: managed.key)
    }

    /// The nested dictionary, if the value is one, else nil. A managed one is live: changing it
    /// (inside a write) changes the stored value.
    public var dictionaryValue: Map<String, AnyRealmValue>? { if case .dictionary(let v) = self { v } else { nil } }

    /// The nested list, if the value is one, else nil. A managed one is live: changing it
    /// (inside a write) changes the stored value.
    public var listValue: List<AnyRealmValue>? { if case .list(let v) = self { v } else { nil } }

    /// A value holding a new, unmanaged dictionary with the entries of `dictionary`.
    public static func fromDictionary(_ dictionary: Dictionary<String, AnyRealmValue>) -> AnyRealmValue {
        let map = Map<String, AnyRealmValue>()
        map.merge(dictionary, uniquingKeysWith: { $1 })
        return .dictionary(map)
    }

    /// A value holding a new, unmanaged list with the elements of `array`.
    public static func fromArray(_ array: Array<AnyRealmValue>) -> AnyRealmValue {
        let list = List<AnyRealmValue>()
        list.append(objectsIn: array)
        return .list(list)
    }

    /// Hashes scalars and objects by value; every dictionary hashes alike, and every list
    /// (their equality may be identity), as in Realm.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .int(let v): hasher.combine(v)
        case .bool(let v): hasher.combine(v)
        case .float(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .data(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v)
        case .objectId(let v): hasher.combine(v)
        case .decimal128(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        case .object(let v): hasher.combine(v)
        case .dictionary: hasher.combine(12)
        case .list: hasher.combine(13)
        case .none: hasher.combine(14)
        }
    }
}

// MARK: - Stored form of the values that are not objects

extension AnyRealmValue {
    /// The value of a stored scalar; nil for a link (reading one needs the Realm).
    init?(scalar mixed: MixedValue) {
        switch mixed {
        case .int(let v): self = .int(Int(v))
        case .bool(let v): self = .bool(v)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .objectId(let v): self = .objectId(v)
        case .decimal(let v): self = .decimal128(v)
        case .uuid(let v): self = .uuid(v)
        case .link, .list, .dictionary: return nil
        }
    }

    /// The value of a stored mixed value: links resolved in `core` (`.none` when the target is
    /// gone, or no core is given), nested collections bound to `nested` (live), or copied into
    /// unmanaged collections when there is no binding (a value read without its owner).
    init(stored mixed: MixedValue?, core: RealmCore?, nested: NestedCollectionBinding?) {
        guard let mixed else {
            self = .none
            return
        }
        switch mixed {
        case .link(let tableId, let key):
            guard let core else {
                self = .none
                return
            }
            guard let table = core.table(id: tableId) else {
                // A class the Realm was opened without: read dynamically, as in Realm.
                self = core.unmodelledObject(tableId: tableId, key: key).map { .object($0) } ?? .none
                return
            }
            guard core.rowView(table, key) != nil,
                  let object = core.accessor(table.info.objectType, table: table, key: key) as? Object
            else {
                self = .none
                return
            }
            self = .object(object)
        case .list(let elements):
            if let nested {
                self = .list(List(nested: nested))
            } else {
                let list = List<AnyRealmValue>()
                list.storage = .unmanaged(elements.map { AnyRealmValue(stored: $0, core: core, nested: nil) })
                self = .list(list)
            }
        case .dictionary(let entries):
            if let nested {
                self = .dictionary(Map(nested: nested))
            } else {
                var copy = [String: AnyRealmValue]()
                for entry in entries { copy[entry.key] = AnyRealmValue(stored: entry.value, core: core, nested: nil) }
                let map = Map<String, AnyRealmValue>()
                map.storage = .unmanaged(copy)
                self = .dictionary(map)
            }
        default:
            self = AnyRealmValue(scalar: mixed) ?? .none
        }
    }

    /// The stored form of the value, nested collections included; objects need `context` (the
    /// Realm receiving them) and are left out (`.none`) without one.
    func storedTree(_ context: _EncodingContext?) -> MixedValue? {
        switch self {
        case .object(let object):
            guard let context else { return nil }
            let key = context.session.linkTarget(object)
            // The target may only be queued (its row written later in the same add): its table
            // is known from its class.
            guard let table = object._managed?.table ?? context.core.table(for: type(of: object), create: true)
            else { return nil }
            return .link(tableId: table.tableId, key: key)
        case .list(let list):
            return .list(list.allElements.map { $0.storedTree(context) })
        case .dictionary(let map):
            let entries = map.entries.map { (key: $0.key, value: $0.value.storedTree(context)) }
            return .dictionary(entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        default:
            return storedScalar
        }
    }

    /// The stored form of a scalar; nil for `.none`, `.object` (a link needs the Realm) and
    /// nested collections (see ``storedTree(_:)``).
    var storedScalar: MixedValue? {
        switch self {
        case .none, .object, .list, .dictionary: nil
        case .int(let v): .int(Int64(v))
        case .bool(let v): .bool(v)
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .data(let v): .data(v)
        case .date(let v): .date(v)
        case .objectId(let v): .objectId(v)
        case .decimal128(let v): .decimal(v)
        case .uuid(let v): .uuid(v)
        }
    }

    /// The Swift value inside (an `Object` for `.object`); nil for `.none`.
    var swiftValue: Any? {
        switch self {
        case .none: nil
        case .int(let v): v
        case .bool(let v): v
        case .float(let v): v
        case .double(let v): v
        case .string(let v): v
        case .data(let v): v
        case .date(let v): v
        case .object(let v): v
        case .objectId(let v): v
        case .decimal128(let v): v
        case .uuid(let v): v
        case .list(let v): v
        case .dictionary(let v): v
        }
    }
}

extension AnyRealmValue: _PersistableInsideOptional {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = _PropertyTypeInfo(.any, swiftName: "AnyRealmValue")
        info.forbidsOptional = true
        return info
    }

    public static func _trellisDefaultValue() -> AnyRealmValue { .none }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> AnyRealmValue {
        guard let mixed = row.row.mixed(column) else { return .none }
        if let scalar = AnyRealmValue(scalar: mixed) { return scalar }
        return AnyRealmValue(stored: mixed, core: row.core, nested: mixed.isCollection ? row.nestedRoot(column) : nil)
    }

    public static func _trellisEncode(_ value: AnyRealmValue, _ context: _EncodingContext) -> _StoredValue {
        value.storedTree(context).map { _StoredValue(.mixed($0)) } ?? _StoredValue(.null)
    }
}

extension _RowReader {
    /// The binding of a nested collection stored in `column` of the owner's row; nil when the
    /// reader has no owner (the value is then read as an unmanaged copy).
    func nestedRoot(_ column: Int) -> NestedCollectionBinding? {
        guard let managed = owner?._managed,
              let field = managed.info.storedFields.first(where: { $0.rowColumn == column })
        else { return nil }
        return NestedCollectionBinding(core: core, root: .property(table: managed.table, key: managed.key, field: field))
    }
}
