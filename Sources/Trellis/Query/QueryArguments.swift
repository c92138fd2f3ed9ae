import Foundation

/// Turns the `Any` arguments of `filter(_:_:)` (and typed-query values) into query values.
enum QueryArguments {
    static func value(_ argument: Any?) -> QueryValue {
        guard let argument else { return .null }
        switch argument {
        case let v as QueryValue: return v
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt: return .int(Int64(truncatingIfNeeded: v))
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Data: return .data(v)
        case let v as Date: return .date(v)
        case let v as ObjectId: return .objectId(v)
        case let v as UUID: return .uuid(v)
        case let v as Decimal128: return .decimal(v)
        case let v as Decimal: return .decimal(Decimal128(v))
        case let v as ObjectBase: return .object(v)
        case let v as AnyRealmValue: return anyRealmValue(v)
        case let v as any RLMGeospatial: return .geo(v._geoShape)
        case let v as any _CustomPersistable:
            let persisted = CustomPersistableArgument.persisted(v)
            if let object = persisted as? ObjectBase { return .memberwise(object) }
            return value(persisted)
        case let v as any RawRepresentable: return value(v.rawValue)
        case let v as any _QueryArgumentSequence: return .list(v._queryValues)
        // `IN %@` with Results, a List, a MutableSet or LinkingObjects: their elements.
        case let v as any RealmCollectionBase: return .list(elementValues(v))
        default:
            // An Optional wrapped in Any: unwrap it.
            let mirror = Mirror(reflecting: argument)
            if mirror.displayStyle == .optional {
                return mirror.children.first.map { value($0.value) } ?? .null
            }
            throwRealmException("Unsupported query argument of type '\(type(of: argument))': pass a number, String, "
                + "Bool, Date, Data, ObjectId, UUID, Decimal128, AnyRealmValue, an enum with a raw value, an object, "
                + "or an array or set of these.")
        }
    }

    private static func elementValues<C: RealmCollectionBase>(_ collection: C) -> [QueryValue] {
        collection.map { value($0) }
    }

    static func anyRealmValue(_ v: AnyRealmValue) -> QueryValue {
        switch v {
        case .none: .null
        case .int(let i): .int(Int64(i))
        case .bool(let b): .bool(b)
        case .float(let f): .double(Double(f))
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .data(let d): .data(d)
        case .date(let d): .date(d)
        case .object(let o): .object(o)
        case .objectId(let o): .objectId(o)
        case .decimal128(let d): .decimal(d)
        case .uuid(let u): .uuid(u)
        case .list: .nestedCollection(.list)
        case .dictionary: .nestedCollection(.dictionary)
        }
    }
}

/// Arrays and sets passed as `IN %@` / `BETWEEN %@` arguments.
protocol _QueryArgumentSequence {
    var _queryValues: [QueryValue] { get }
}

extension Array: _QueryArgumentSequence {
    var _queryValues: [QueryValue] { map { QueryArguments.value($0) } }
}

extension Set: _QueryArgumentSequence {
    var _queryValues: [QueryValue] { map { QueryArguments.value($0) } }
}

extension ContiguousArray: _QueryArgumentSequence {
    var _queryValues: [QueryValue] { map { QueryArguments.value($0) } }
}

/// Finds the property names a Swift key path designates (`\Person.dog.name` → `dog.name`) by
/// reading it on prototype objects that record which `@Persisted` storage was touched.
enum QueryKeyPathNames {
    static func name<Root: ObjectBase>(of keyPath: PartialKeyPath<Root>) -> String {
        let recorder = KeyPathRecorder()
        let prototype = Root()
        prototype._record(with: recorder)
        let read = recorder.reading { prototype[keyPath: keyPath] }
        guard !recorder.names.isEmpty else {
            if let name = legacyName(prototype, read) { return name }
            throwRealmException("Key path \(keyPath) on '\(Root.className())' does not name a persisted property.")
        }
        return recorder.names.joined(separator: ".")
    }

    /// A legacy declaration (`let dogs = List<Dog>()`, `MutableSet`, `Map`, `RealmProperty`,
    /// `RealmOptional`, `LinkingObjects`) is read without going through `@Persisted`, so nothing
    /// records it: it is the legacy field that holds the very object the key path read (for
    /// `LinkingObjects`, a struct, the one field declared with the same type and origin property).
    private static func legacyName(_ prototype: ObjectBase, _ read: Any) -> String? {
        let info = ClassInfo.unbound(for: type(of: prototype))
        let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        let matches = info.legacyFields.filter { field in
            guard let witness = field.witness as? any LegacyFieldWitness.Type else { return false }
            return witness.isValue(read, at: base + field.offset)
        }
        return matches.count == 1 ? matches[0].name : nil
    }
}
