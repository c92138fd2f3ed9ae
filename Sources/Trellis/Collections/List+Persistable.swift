import Foundation

/// How `@Persisted var dogs: List<Dog>` is described, stored and assigned.
extension List: _Persistable, _CachedAccessor, _CollectionAssignable, _CollectionProperty {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = Element._trellisTypeInfo
        info.collection = .list
        // A custom type stored as an object holds a link per element, never null.
        if info.isLinkThroughCustomType { info.isOptional = false }
        info.swiftName = "List<\(info.swiftName)>"
        return info
    }

    public static func _trellisDefaultValue() -> Self { Self() }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        throwRealmException("Trellis internal error: a List is not read from a row.")
    }

    public static func _trellisEncode(_ value: List, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }

    /// `obj.dogs = other`: empties this list and appends the other's elements (a list assigned
    /// to itself is left alone).
    static func _trellisAssign(_ value: Any, to object: ObjectBase, field: FieldInfo) {
        guard let newList = value as? List, let current = field.witness.dynamicGet(object, field) as? List else {
            throwRealmException("Trellis internal error: '\(field.name)' is not a List<\(Element.self)>.")
        }
        if current === newList { return }
        if assignByDifference(newList, to: current, "List") { return }
        let elements = newList.allElements
        current.removeAll()
        current.append(objectsIn: elements)
    }

    static func _trellisAttach(_ value: List, to binding: CollectionBinding, session: AddSession) -> List {
        if session.ownerIsNew, value._isUnmanaged, let objects = objectElements(value, binding) {
            // The common case, a new object's list of objects: no generic enum is looked up.
            binding.core.storeNewLinkList(binding.location, session.linkTargets(objects))
            value.becomeManaged(binding)
            return value
        }
        guard let target = attachTarget(value, binding) else { return value }
        session.noteReplacement(of: binding)
        if session.policy == .modified, binding.location.field.isEmbeddedLink {
            // Realm mutates the existing embedded elements in place, appends the extra ones.
            let existing = binding.core.listElements(binding.location).compactMap(CollectionElement.linkKey)
            for (element, key) in zip(value.allElements, existing) {
                if let embedded = element as? EmbeddedObject { session.reuseEmbedded(embedded, key: key) }
            }
        }
        let ownerIsNew = session.ownerIsNew
        let encoded = value.allElements.map { binding.encode($0, session: session) }
        if !(ownerIsNew && encoded.isEmpty) {
            // A new owner has nothing stored yet: an empty list needs no write at all.
            let stored = ownerIsNew ? 0 : binding.core.listCount(binding.location)
            binding.core.listSplice(binding.location, 0..<stored, with: encoded)
        }
        target.storage = .managed(binding)
        return target
    }

    /// The elements of a list of objects (not embedded, not dynamic) as `[Object]`, which
    /// non-generic code reads without looking anything up per element; nil for other lists.
    private static func objectElements(_ value: List, _ binding: CollectionBinding) -> [Object]? {
        guard Element.self is Object.Type, !Element._trellisIsDynamicObject, binding.location.field.isLink,
              !binding.location.field.isEmbeddedLink
        else { return nil }
        // An array of class references has one layout whatever the class.
        return unsafeBitCast(value.allElements, to: [Object].self)
    }

    static func _trellisConvert(_ value: Any) -> List? {
        guard let items = CollectionConversion.items(of: value),
              let elements = CollectionConversion.convert(items, to: Element.self)
        else { return nil }
        let list = List()
        list.storage = .unmanaged(elements)
        return list
    }

    var _trellisElements: [Any] { allElements.map { $0 as Any } }
}

/// Turning loosely typed values (arrays, other collections) into collection contents.
enum CollectionConversion {
    /// The elements of a value assigned to a `List` or `MutableSet` property: another Realm
    /// collection, an array, or any other sequence (a `Results`, `LinkingObjects`, a `Set`), as
    /// Realm takes any enumerable value there (its docs assign a `Results` to a `List`). A
    /// string, `Data` or a dictionary is one value, not a sequence of elements.
    static func items(of value: Any) -> [Any]? {
        if let collection = value as? any _CollectionProperty { return collection._trellisElements }
        if let array = value as? [Any] { return array }
        if value is any StringProtocol || value is Data || value is [AnyHashable: Any] { return nil }
        if let sequence = value as? any Sequence { return elements(of: sequence) }
        return nil
    }

    /// The elements of `sequence`, read once (a live `Results` of the collection being assigned
    /// to is copied before the assignment changes it).
    private static func elements<S: Sequence>(of sequence: S) -> [Any] { sequence.map { $0 as Any } }

    static func convert<Element: _Persistable>(_ items: [Any], to _: Element.Type) -> [Element]? {
        var out = [Element]()
        out.reserveCapacity(items.count)
        // A custom type stored as an object reads a null link as its default value, but a list
        // or set of them holds a link per element: null is no element (as in Realm; a map can
        // hold null).
        let refusesNull = Element._trellisTypeInfo.isLinkThroughCustomType
        for item in items {
            if refusesNull, ValueConversion.unwrapped(item) == nil { return nil }
            guard let element = ValueConversion.convert(item, to: Element.self) else { return nil }
            out.append(element)
        }
        return out
    }
}
