import Foundation

// Realm's key-value coding, done through Trellis's own dynamic property access (there is no
// Objective-C runtime on Linux): `object.value(forKey: "age")`, `object.setValue(3, forKey:
// "age")`, `dogs.value(forKey: "name")` (one value per element), `map.setValue(v, forKey: k)`.

extension ObjectBase {
    /// The value of the property named `key` (a collection property gives its collection;
    /// `"self"` gives the object). An unknown name traps with Realm's message.
    public func value(forKey key: String) -> Any? { key == "self" ? self : self[key] }

    /// Follows a dotted key path through to-one links (`"dog.name"`); nil once a link is nil.
    /// Through a collection, gives one value per element (an array).
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCoding.value(of: self, path: keyPath.split(separator: ".").map(String.init))
    }

    /// Sets the property named `key` (inside a write transaction when the object is managed).
    public func setValue(_ value: Any?, forKey key: String) {
        // On a legacy `RealmProperty`/`RealmOptional` this sets its `value`, whose primary-key
        // message is realm-core's (the subscript's is the accessor's).
        if let managed = _managed, let field = managed.info.field(named: key), field.isPrimaryKey,
           field.witness.isLegacyField
        {
            managed.core.refusePrimaryKeyChange(managed, field, legacyValue: true)
        }
        self[key] = value
    }

    /// Sets the last property of a dotted key path (`"dog.name"`) on what the rest of the path
    /// leads to, as NSObject's `setValue(_:forKeyPath:)` (which Realm's objects inherit): nothing
    /// when a link on the way is nil; every element's through a collection.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        let names = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard names.count > 1, let last = names.last else { return setValue(value, forKey: keyPath) }
        KeyValueCoding.setValue(value, forKey: last, at: KeyValueCoding.value(of: self, path: Array(names.dropLast())))
    }
}

enum KeyValueCoding {
    /// A property value as Realm's dynamic getters (`object[key]`, `value(forKey:)`) hand it
    /// out: an `AnyRealmValue` as the value inside (nil for `.none`, the `String` of `.string`,
    /// the object of `.object`), sized integers as `NSNumber` (see ``bridgingSizedIntegers(_:)``).
    static func dynamicValue(_ value: Any?) -> Any? {
        if let mixed = value as? AnyRealmValue { return mixed.swiftValue }
        return bridgingSizedIntegers(value)
    }

    /// A sized integer (`Int8` … `Int64`, optional or not) as an `NSNumber`, which casts to
    /// any integer type (Realm's dynamic getters hand numbers out that way); anything else,
    /// `Int` included, as it is.
    static func bridgingSizedIntegers(_ value: Any?) -> Any? {
        switch value {
        case let number as Int8: NSNumber(value: number)
        case let number as Int16: NSNumber(value: number)
        case let number as Int32: NSNumber(value: number)
        case let number as Int64: NSNumber(value: number)
        default: value
        }
    }

    /// The value at `path` from `root`: objects are followed by name, collections map over
    /// their elements.
    static func value(of root: Any?, path: [String]) -> Any? {
        guard let first = path.first else { return root }
        let rest = Array(path.dropFirst())
        switch root {
        case nil:
            return nil
        case let object as ObjectBase:
            // "self" is the object itself, as for any NSObject in Realm's key-value coding.
            if first == "self" { return value(of: object, path: rest) }
            return value(of: object[first], path: rest)
        case let collection as any _KeyValueCollection:
            // `@count`, `@sum.age`, `@unionOfObjects.name`…: Realm's collection operators.
            if first.hasPrefix("@") { return KeyValueCollectionOperators.value(of: collection, path: path) }
            return collection._elementsForKeyValueCoding.map { value(of: $0, path: path) as Any }
        default:
            if first == "self" { return value(of: root, path: rest) }
            throwRealmException("Invalid property name '\(first)': \(type(of: root as Any)) has no properties.")
        }
    }

    /// Sets `key` on what a key path led to: an object, or every object of a collection (or of
    /// the array a path through a collection gives); nothing on nil.
    static func setValue(_ value: Any?, forKey key: String, at target: Any?) {
        switch target {
        case nil: return
        case let object as ObjectBase: object.setValue(value, forKey: key)
        case let collection as any _KeyValueCollection:
            setValue(value, forKey: key, on: collection._elementsForKeyValueCoding)
        case let elements as [Any]:
            for element in elements { setValue(value, forKey: key, at: element) }
        default:
            throwRealmException("Invalid property name '\(key)': \(type(of: target as Any)) has no properties.")
        }
    }

    /// Sets `key` on every object of a collection (Realm's `setValue(_:forKey:)` on a collection).
    static func setValue(_ value: Any?, forKey key: String, on elements: [Any]) {
        for element in elements {
            guard let object = element as? ObjectBase else {
                throwRealmException("setValue(_:forKey:) is only supported on collections of objects.")
            }
            object[key] = value
        }
    }
}

/// A collection whose elements key-value coding maps over. Not API.
public protocol _KeyValueCollection {
    /// The elements, each as `Any`. Not API.
    var _elementsForKeyValueCoding: [Any] { get }
}

extension Results: _KeyValueCollection {
    public var _elementsForKeyValueCoding: [Any] { map { $0 as Any } }
}
extension List: _KeyValueCollection {
    public var _elementsForKeyValueCoding: [Any] { map { $0 as Any } }
}
extension MutableSet: _KeyValueCollection {
    public var _elementsForKeyValueCoding: [Any] { map { $0 as Any } }
}
extension LinkingObjects: _KeyValueCollection {
    public var _elementsForKeyValueCoding: [Any] { map { $0 as Any } }
}

extension _KeyValueCollection {
    /// One value per element: `dogs.value(forKey: "name")` is `[Any]` of names
    /// (`"self"` gives the elements).
    public func value(forKey key: String) -> Any? {
        _elementsForKeyValueCoding.map { KeyValueCoding.value(of: $0, path: [key]) as Any }
    }

    /// One value per element for a dotted key path.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCoding.value(of: self, path: keyPath.split(separator: ".").map(String.init))
    }

    /// Sets `key` on every object of the collection (inside a write transaction).
    public func setValue(_ value: Any?, forKey key: String) {
        KeyValueCoding.setValue(value, forKey: key, on: _elementsForKeyValueCoding)
    }
}

extension Map {
    /// The value stored under `key`, as `map[key]` (nil when absent).
    public func value(forKey key: String) -> Any? {
        let typedKey = Key(_trellisKeyString: key)
        return self[typedKey].map { $0 as Any }
    }

    /// Follows a dotted key path from the value stored under its first component.
    public func value(forKeyPath keyPath: String) -> Any? {
        let path = keyPath.split(separator: ".").map(String.init)
        guard let first = path.first else { return nil }
        return KeyValueCoding.value(of: value(forKey: first), path: Array(path.dropFirst()))
    }

    /// Stores `value` under `key` (nil removes the key), inside a write transaction when managed.
    public func setValue(_ value: Any?, forKey key: String) {
        let typedKey = Key(_trellisKeyString: key)
        guard let value else {
            self[typedKey] = nil
            return
        }
        guard let typed = ValueConversion.convert(value, to: Value.self) else {
            throwRealmException("Cannot store a value of type \(type(of: value)) in a Map of \(Value.self).")
        }
        self[typedKey] = typed
    }
}
