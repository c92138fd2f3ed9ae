import Foundation

/// Key types a `Map` accepts: only `String`, as in Realm.
public protocol _MapKey: Hashable, Comparable {
    var _trellisKeyString: String { get }
    init(_trellisKeyString: String)
}

extension String: _MapKey {
    public var _trellisKeyString: String { self }
    public init(_trellisKeyString: String) { self = _trellisKeyString }
}

/// One entry of a map, as iteration yields it.
public struct SingleMapEntry<Key: _MapKey, Value: RealmCollectionValue>: Hashable {
    /// The entry's key.
    public let key: Key
    /// The value stored under ``key``.
    public let value: Value
}

/// A collection of values keyed by strings: Realm's dictionary.
///
/// ```swift
/// class Person: Object {
///     @Persisted var dogsByNickname: Map<String, Dog?>
/// }
/// person.dogsByNickname["rex"] = dog
/// ```
///
/// Object values must be optional: deleting a target keeps its key with a nil value. Setting
/// a key to nil removes it. Keys may not start with `$` or contain `.`. Managed maps iterate in
/// key order.
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: Sequence, CustomStringConvertible {
    var storage: CollectionStorage<[Key: Value]>

    /// Creates an empty, unmanaged map.
    public init() { storage = .unmanaged([:]) }

    init(binding: CollectionBinding) { storage = .managed(binding) }

    /// A dictionary nested in an `AnyRealmValue` (`Value` is `AnyRealmValue`).
    init(nested: NestedCollectionBinding) { storage = .nested(nested) }

    /// The Realm managing the map, or nil when it is unmanaged.
    public var realm: Realm? { managingRealm }

    /// Whether the object owning the map was deleted (or its Realm invalidated).
    public var isInvalidated: Bool { ownerIsGone }

    /// The number of keys.
    public var count: Int {
        switch storage {
        case .unmanaged(let entries): return entries.count
        case .managed(let binding):
            binding.verifyReadable()
            return binding.core.mapCount(binding.location)
        case .nested(let nested):
            nested.verifyReadable("Dictionary")
            return nested.count
        }
    }

    /// Whether the map has no keys.
    public var isEmpty: Bool { count == 0 }

    /// The value for `key` (for `Map<String, Dog?>`: `Dog??`, where `.some(nil)` is a key whose
    /// object was deleted). Setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            switch storage {
            case .unmanaged(let entries):
                // `\Person.pets[""]??.name` read on a recording prototype (see KeyPathRecorder).
                return entries[key] ?? KeyPathRecorder.element(Value.self)
            case .managed(let binding):
                binding.verifyReadable()
                let name = key._trellisKeyString
                return binding.core.mapValue(binding.location, name).map {
                    binding.decode($0, nestedAt: .mapValue(binding.location, key: name))
                }
            case .nested(let nested):
                nested.verifyReadable("Dictionary")
                let name = key._trellisKeyString
                return nested.dictionaryEntries().first { $0.key == name }.flatMap { $0.value as? Value }
            }
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// The keys, in key order.
    public var keys: [Key] { entries.map(\.key) }
    /// The values, in key order.
    public var values: [Value] { entries.map(\.value) }

    /// Sets the value of `key`, adding the key if needed. An unmanaged object is added to the
    /// Realm; an embedded object that was the old value is deleted.
    public func updateValue(_ value: Value, forKey key: Key) {
        let name = key._trellisKeyString
        Self.checkKey(name)
        switch storage {
        case .unmanaged(var entries):
            storage = .unmanaged([:])
            entries[key] = value
            storage = .unmanaged(entries)
        case .managed(let binding):
            binding.verifyWritable("Dictionary")
            let encoded = binding.encode(value, session: binding.session("Dictionary"))
            binding.core.mapSet(binding.location, name, encoded)
        case .nested(let nested):
            nested.verifyWritable("Dictionary")
            guard let any = value as? AnyRealmValue else { return }
            let encoded = nested.encode([any], kind: "Dictionary")[0]
            nested.modifyDictionary { entries in
                if let position = entries.firstIndex(where: { $0.key == name }) {
                    entries[position].value = encoded
                } else {
                    entries.append((name, encoded))
                }
            }
        }
    }

    /// Removes `key` and its value (objects stay in the Realm; embedded objects are deleted).
    public func removeObject(for key: Key) {
        switch storage {
        case .unmanaged(var entries):
            storage = .unmanaged([:])
            entries[key] = nil
            storage = .unmanaged(entries)
        case .managed(let binding):
            binding.verifyWritable("Dictionary")
            binding.core.mapRemove(binding.location, key._trellisKeyString)
        case .nested(let nested):
            nested.verifyWritable("Dictionary")
            let name = key._trellisKeyString
            nested.modifyDictionary { entries in entries.removeAll { $0.key == name } }
        }
    }

    /// Removes every key (in a synced Realm, also those whose objects it cannot show).
    public func removeAll() {
        switch storage {
        case .unmanaged: storage = .unmanaged([:])
        case .managed(let binding):
            binding.verifyWritable("Dictionary")
            binding.core.noteSyncClear(binding.location)
            binding.core.mapRemoveAll(binding.location)
        case .nested(let nested):
            nested.verifyWritable("Dictionary")
            nested.modifyDictionary { $0.removeAll() }
        }
    }

    /// Adds the entries of a sequence; for a key already present, `combine` chooses the value.
    public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (key, value) in Array(sequence) {
            if let existing = self[key] {
                updateValue(try combine(existing, value), forKey: key)
            } else {
                updateValue(value, forKey: key)
            }
        }
    }

    /// Adds the entries of another map; for a key already present, `combine` chooses the value.
    public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.entries.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// Whether some entry satisfies `predicate`.
    public func contains(where predicate: (_ key: Key, _ value: Value) -> Bool) -> Bool {
        entries.contains { predicate($0.key, $0.value) }
    }

    /// Iterates the entries the map held when iteration began, in key order.
    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> { entries.makeIterator() }

    /// The entries, in key order (read once).
    var entries: [SingleMapEntry<Key, Value>] {
        switch storage {
        case .unmanaged(let entries):
            return entries.sorted { $0.key < $1.key }.map { SingleMapEntry(key: $0.key, value: $0.value) }
        case .managed(let binding):
            binding.verifyReadable()
            return binding.core.mapEntries(binding.location).map {
                SingleMapEntry(key: Key(_trellisKeyString: $0.key),
                               value: binding.decode($0.value, nestedAt: .mapValue(binding.location, key: $0.key)))
            }
        case .nested(let nested):
            nested.verifyReadable("Dictionary")
            return nested.dictionaryEntries().compactMap { entry in
                (entry.value as? Value).map { SingleMapEntry(key: Key(_trellisKeyString: entry.key), value: $0) }
            }
        }
    }

    /// `Map<string, Dog> <0x…> (\n[key]: Dog {…}\n)`, as Realm prints it.
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }

    /// Realm's rules for dictionary keys.
    static func checkKey(_ key: String) {
        if key.hasPrefix("$") { throwRealmException("Dictionary::insert: key must not start with '$'") }
        if key.contains(".") { throwRealmException("Dictionary::insert: key must not contain '.'") }
        if key.utf8.count > CollectionKey.maximumMapKeyBytes {
            throwRealmException("Dictionary::insert: key is longer than \(CollectionKey.maximumMapKeyBytes) bytes")
        }
    }
}

extension Map: Equatable {
    /// Unmanaged maps are equal when their entries are; managed maps when they are the same
    /// stored map.
    public static func == (lhs: Map, rhs: Map) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.unmanaged(let a), .unmanaged(let b)): a == b
        case (.managed(let a), .managed(let b)): a.isSameCollection(as: b)
        case (.nested(let a), .nested(let b)): a.isSame(as: b)
        default: false
        }
    }
}

extension Map {
    /// Whether `object` is a Map equal to this one by `==` (Realm's `isEqual(_:)`):
    /// unmanaged ones by their contents, managed ones when they are the same stored map.
    public func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? Map<Key, Value> else { return false }
        return self == other
    }
}

/// How `@Persisted var dogs: Map<String, Dog?>` is described, stored and assigned.
extension Map: _Persistable, _CachedAccessor, _CollectionAssignable, _CollectionProperty {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = Value._trellisTypeInfo
        info.collection = .map
        info.swiftName = "Map<\(Key.self), \(info.swiftName)>"
        return info
    }

    public static func _trellisDefaultValue() -> Self { Self() }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        throwRealmException("Trellis internal error: a Map is not read from a row.")
    }

    public static func _trellisEncode(_ value: Map, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }

    static func _trellisAssign(_ value: Any, to object: ObjectBase, field: FieldInfo) {
        guard let newMap = value as? Map, let current = field.witness.dynamicGet(object, field) as? Map else {
            throwRealmException("Trellis internal error: '\(field.name)' is not a Map<\(Key.self), \(Value.self)>.")
        }
        if current === newMap { return }
        if assignByDifference(newMap, to: current, "Dictionary") { return }
        let entries = newMap.entries
        current.removeAll()
        for entry in entries { current.updateValue(entry.value, forKey: entry.key) }
    }

    static func _trellisAttach(_ value: Map, to binding: CollectionBinding, session: AddSession) -> Map {
        guard let target = attachTarget(value, binding) else { return value }
        let entries = value.entries
        session.noteReplacement(of: binding)
        // realm-core's `Dictionary::assign`: emptied first unless the policy diffs; under
        // `.modified` only the given keys are set, an equal value is left alone and an
        // embedded value is updated in place (`Dictionary::insert`).
        let diffs = session.diffsCollections, location = binding.location
        if !session.ownerIsNew, !diffs { binding.core.mapRemoveAll(location) }
        for entry in entries {
            let name = entry.key._trellisKeyString
            checkKey(name)
            if diffs, location.field.isEmbeddedLink, let embedded = entry.value as? EmbeddedObject,
               let old = binding.core.mapValue(location, name).flatMap(CollectionElement.linkKey)
            {
                session.reuseEmbedded(embedded, key: old)
            }
            let encoded = binding.encode(entry.value, session: session)
            if diffs, let old = binding.core.mapValue(location, name), old.elementsEqual(encoded) { continue }
            binding.core.mapSet(location, name, encoded)
        }
        target.storage = .managed(binding)
        return target
    }

    static func _trellisConvert(_ value: Any) -> Map? {
        let pairs: [(String, Any)]
        if let map = value as? any _CollectionProperty, let entries = map._trellisElements as? [(String, Any)] {
            pairs = entries
        } else if let dictionary = value as? [String: Any] {
            pairs = dictionary.map { ($0.key, $0.value) }
        } else {
            return nil
        }
        let map = Map()
        for (key, item) in pairs {
            guard let converted = ValueConversion.convert(item, to: Value.self) else { return nil }
            map.updateValue(converted, forKey: Key(_trellisKeyString: key))
        }
        return map
    }

    var _trellisElements: [Any] { entries.map { ($0.key._trellisKeyString, $0.value as Any) as Any } }
}
