import Foundation

/// Turns the value given to `create(_:value:update:)` into values it can store in a Realm, as
/// Realm does: `create` is called recursively on the objects the value holds, so they are
/// copied, never added themselves.
///
/// Objects of the same Realm are linked as they are (a shallow copy); objects of another Realm
/// and unmanaged objects are copied (the unmanaged source stays unmanaged), and embedded objects
/// always are (an embedded object has one parent). Copies are made from a work list, not by
/// recursion, and each source object is copied once, so cycles and long chains are fine.
struct CreateValueCopier {
    let target: RealmCore
    private var copies: [RowIdentity: ObjectBase] = [:]
    private var unmanagedCopies: [ObjectIdentifier: ObjectBase] = [:]
    private var work: [(source: ObjectBase, copy: ObjectBase)] = []

    private struct RowIdentity: Hashable {
        let path: String
        let table: UInt32
        let key: ObjectKey
    }

    init(target: RealmCore) { self.target = target }

    /// The stored properties of `source`, by name, with links converted; copies are filled in too.
    mutating func dictionary(of source: ObjectBase) -> [String: Any] {
        var dictionary = [String: Any]()
        for field in ClassInfo.unbound(for: type(of: source)).storedFields {
            dictionary[field.name] = convert(source.storedValue(forKey: field.name)) ?? NSNull()
        }
        while let (source, copy) = work.popLast() { fill(copy, from: source) }
        return dictionary
    }

    /// A dictionary or an array in property order with every object it holds (at any depth of
    /// nested dictionaries and arrays) converted; copies are filled in too.
    mutating func value(_ value: Any) -> Any {
        let converted = convert(value) ?? NSNull()
        while let (source, copy) = work.popLast() { fill(copy, from: source) }
        return converted
    }

    private mutating func fill(_ copy: ObjectBase, from source: ObjectBase) {
        for field in ClassInfo.unbound(for: type(of: source)).storedFields {
            copy[field.name] = convert(source.storedValue(forKey: field.name))
        }
    }

    /// A value with every managed object it holds converted (see the type's rules).
    private mutating func convert(_ value: Any?) -> Any? {
        switch value {
        case let object as ObjectBase:
            return convert(object)
        case let value as AnyRealmValue:
            if case .object(let object) = value, let converted = convert(object) as? Object { return AnyRealmValue.object(converted) }
            return value
        case let collection as any _KeyValueCollection:
            let elements = collection._elementsForKeyValueCoding.map { convert($0) ?? NSNull() }
            // A set stays a set (not an array): Realm refuses one for an AnyRealmValue property.
            if collection is any _SetForCopying { return CopiedSetElements(elements: elements, source: "\(collection)") }
            return elements
        case let map as any _MapForCopying:
            return map._entriesForCopying.mapValues { convert($0) ?? NSNull() }
        case let array as [Any]:
            return array.map { convert($0) ?? NSNull() }
        case let dictionary as [String: Any]:
            return dictionary.mapValues { convert($0) ?? NSNull() }
        default:
            return value
        }
    }

    private mutating func convert(_ object: ObjectBase) -> ObjectBase {
        guard let managed = object._managed else {
            let identity = ObjectIdentifier(object)
            if let copy = unmanagedCopies[identity] { return copy }
            let copy = type(of: object).init()
            unmanagedCopies[identity] = copy
            work.append((object, copy))
            return copy
        }
        if !(object is EmbeddedObject), managed.core === target { return object }
        let identity = RowIdentity(path: managed.core.environmentPath, table: managed.table.tableId, key: managed.key)
        if let copy = copies[identity] { return copy }
        let copy = type(of: object).init()
        copies[identity] = copy
        work.append((object, copy))
        return copy
    }
}

/// A `MutableSet`, whose copied elements stay a set's (see ``CopiedSetElements``).
protocol _SetForCopying {}

extension MutableSet: _SetForCopying {}

/// The elements of a `MutableSet` given to `create`, copied: a sequence (what a `List` or
/// `MutableSet` property takes, as it takes the set itself) but no array, which an
/// `AnyRealmValue` property would store as a nested list. It describes itself as the set did,
/// for the message that refuses it.
struct CopiedSetElements: Sequence, CustomStringConvertible {
    let elements: [Any]
    let source: String

    func makeIterator() -> IndexingIterator<[Any]> { elements.makeIterator() }
    var description: String { source }
}

/// A Map whose entries can be read for copying. Not API.
public protocol _MapForCopying {
    /// The entries with their values as `Any`. Not API.
    var _entriesForCopying: [String: Any] { get }
}

extension Map: _MapForCopying {
    public var _entriesForCopying: [String: Any] {
        var entries = [String: Any]()
        for key in keys { entries[key._trellisKeyString] = self[key].map { $0 as Any } ?? NSNull() }
        return entries
    }
}
