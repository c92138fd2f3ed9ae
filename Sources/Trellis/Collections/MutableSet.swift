import Foundation

/// An unordered collection of unique values or objects (objects are unique by row).
///
/// ```swift
/// class Person: Object {
///     @Persisted var favoriteDogs: MutableSet<Dog>
/// }
/// ```
///
/// Managed sets are stored keyed by their elements, so `contains`, `insert` and `remove` are
/// one lookup each. Sets of embedded objects are a schema error.
public final class MutableSet<Element: RealmCollectionValue>: RandomAccessCollection, CustomStringConvertible {
    var storage: CollectionStorage<[Element]>

    /// Creates an empty, unmanaged set.
    public init() { storage = .unmanaged([]) }

    init(binding: CollectionBinding) { storage = .managed(binding) }

    /// The Realm managing the set, or nil when it is unmanaged.
    public var realm: Realm? { managingRealm }

    /// Whether the object owning the set was deleted (or its Realm invalidated).
    public var isInvalidated: Bool { ownerIsGone }

    // MARK: - Reading

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of members.
    public var count: Int {
        switch storage {
        case .unmanaged(let elements): return elements.count
        case .managed(let binding):
            binding.verifyReadable()
            return binding.core.setCount(binding.location)
        case .nested: Self.neverNested()
        }
    }

    /// The member at `position`; the order is unspecified but stable until the set changes.
    public subscript(position: Int) -> Element {
        let all = allElements
        // `\Person.pets[0].name` read on a recording prototype (see KeyPathRecorder).
        if position >= all.count, let element = KeyPathRecorder.element(Element.self) { return element }
        CollectionIndex.check(position, count: all.count)
        return all[position]
    }

    /// Whether `object` is a member (for objects: the same row).
    public func contains(_ object: Element) -> Bool {
        switch storage {
        case .unmanaged(let elements): return elements.contains(object)
        case .managed(let binding):
            binding.verifyReadable()
            guard let key = binding.lookupKey(object) else { return false }
            return binding.core.setContains(binding.location, key)
        case .nested: Self.neverNested()
        }
    }

    /// Whether every member is also in `possibleSuperset`.
    public func isSubset(of possibleSuperset: MutableSet<Element>) -> Bool {
        allElements.allSatisfy { possibleSuperset.contains($0) }
    }

    /// Whether the sets have a member in common.
    public func intersects(_ otherSet: MutableSet<Element>) -> Bool {
        allElements.contains { otherSet.contains($0) }
    }

    /// Positions make no sense in a set.
    /// Not available: a set has no order. Traps with Realm's message.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        throwRealmException("index(matching:) is not available on MutableSet")
    }

    /// Not available: a set has no order. Traps with Realm's message.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        throwRealmException("index(matching:) is not available on MutableSet")
    }

    /// Not available: a set has no order. Traps with Realm's message.
    public func index(of object: Element) -> Int? {
        throwRealmException("index(of:) is not available on MutableSet")
    }

    /// Iterates the members the set held when iteration began.
    public func makeIterator() -> IndexingIterator<[Element]> { allElements.makeIterator() }

    /// The members as a Swift array (read once).
    var allElements: [Element] {
        switch storage {
        case .unmanaged(let elements): return elements
        case .managed(let binding):
            binding.verifyReadable()
            let core = binding.core
            return core.setElements(binding.location, conformingTo: core.setCount(binding.location))
                .map { binding.decode($0) }
        case .nested: Self.neverNested()
        }
    }

    /// `MutableSet<Dog> <0x…> (\n\t[0] Dog {…}\n)`, as Realm prints it.
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }

    // MARK: - Mutating

    /// Adds `object` unless it is already a member. An unmanaged object is added to the Realm.
    public func insert(_ object: Element) {
        mutate { binding, session in
            binding.core.setInsert(binding.location, binding.encode(object, session: session))
        } unmanaged: { elements in
            if !elements.contains(object) { elements.append(object) }
        }
    }

    /// Adds each element of a sequence that is not already a member.
    public func insert<S: Sequence>(objectsIn objects: S) where S.Iterator.Element == Element {
        let items = Array(objects)
        for object in items { insert(object) }
    }

    /// Removes `object` if it is a member (objects stay in the Realm).
    public func remove(_ object: Element) {
        mutate { binding, _ in
            if let key = binding.lookupKey(object) { binding.core.setRemove(binding.location, key) }
        } unmanaged: { elements in
            elements.removeAll { $0 == object }
        }
    }

    /// Removes every member (objects stay in the Realm). In a synced Realm, the members it
    /// cannot show (links to objects outside the subscriptions) go too, as in Realm.
    public func removeAll() {
        mutate { binding, _ in
            binding.core.noteSyncClear(binding.location)
            binding.core.setRemoveAll(binding.location)
        } unmanaged: { elements in
            elements.removeAll()
        }
    }

    /// Keeps only the members that are also in `other`.
    public func formIntersection(_ other: MutableSet<Element>) {
        checkOperand(other)
        for element in allElements where !other.contains(element) { remove(element) }
    }

    /// Removes the members that are in `other`.
    public func subtract(_ other: MutableSet<Element>) {
        checkOperand(other)
        for element in other.allElements { remove(element) }
    }

    /// Adds the members of `other`.
    public func formUnion(_ other: MutableSet<Element>) {
        checkOperand(other)
        insert(objectsIn: other.allElements)
    }

    /// A managed set combines only with a managed set (Realm's rule).
    private func checkOperand(_ other: MutableSet<Element>) {
        guard case .managed(let binding) = storage else { return }
        binding.verifyWritable("Set")
        guard case .managed(let otherBinding) = other.storage else {
            throwRealmException("Right hand side value must be a managed Set.")
        }
        if otherBinding.core !== binding.core {
            throwRealmException("Cannot insersect sets managed by different Realms.")
        }
    }

    private func mutate(managed: (CollectionBinding, AddSession) -> Void, unmanaged: (inout [Element]) -> Void) {
        switch storage {
        case .unmanaged(var elements):
            storage = .unmanaged([])
            unmanaged(&elements)
            storage = .unmanaged(elements)
        case .managed(let binding):
            binding.verifyWritable("Set")
            managed(binding, binding.session("Set"))
        case .nested: Self.neverNested()
        }
    }

    /// Realm has no sets inside `AnyRealmValue`, so a set never has nested storage.
    private static func neverNested() -> Never {
        throwRealmException("Trellis internal error: a MutableSet cannot be nested in an AnyRealmValue.")
    }
}

extension MutableSet: Equatable {
    /// Unmanaged sets are equal when they have the same members; managed sets when they are the
    /// same stored set.
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.unmanaged(let a), .unmanaged(let b)): a.count == b.count && a.allSatisfy(b.contains)
        case (.managed(let a), .managed(let b)): a.isSameCollection(as: b)
        default: false
        }
    }
}

extension MutableSet {
    /// Whether `object` is a MutableSet equal to this one by `==` (Realm's `isEqual(_:)`):
    /// unmanaged ones by their contents, managed ones when they are the same stored mutableset.
    public func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? MutableSet<Element> else { return false }
        return self == other
    }
}

/// How `@Persisted var dogs: MutableSet<Dog>` is described, stored and assigned.
extension MutableSet: _Persistable, _CachedAccessor, _CollectionAssignable, _CollectionProperty {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        var info = Element._trellisTypeInfo
        info.collection = .set
        // A custom type stored as an object holds a link per element, never null.
        if info.isLinkThroughCustomType { info.isOptional = false }
        info.swiftName = "MutableSet<\(info.swiftName)>"
        return info
    }

    public static func _trellisDefaultValue() -> Self { Self() }

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        throwRealmException("Trellis internal error: a MutableSet is not read from a row.")
    }

    public static func _trellisEncode(_ value: MutableSet, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }

    static func _trellisAssign(_ value: Any, to object: ObjectBase, field: FieldInfo) {
        guard let newSet = value as? MutableSet, let current = field.witness.dynamicGet(object, field) as? MutableSet
        else { throwRealmException("Trellis internal error: '\(field.name)' is not a MutableSet<\(Element.self)>.") }
        if current === newSet { return }
        if assignByDifference(newSet, to: current, "Set") { return }
        let elements = newSet.allElements
        current.removeAll()
        current.insert(objectsIn: elements)
    }

    static func _trellisAttach(_ value: MutableSet, to binding: CollectionBinding, session: AddSession) -> MutableSet {
        guard let target = attachTarget(value, binding) else { return value }
        let elements = value.allElements
        session.noteReplacement(of: binding)
        // realm-core's `Set::assign`: emptied first unless the policy diffs (`.modified` inserts).
        if !session.ownerIsNew, !session.diffsCollections { binding.core.setRemoveAll(binding.location) }
        for element in elements { binding.core.setInsert(binding.location, binding.encode(element, session: session)) }
        target.storage = .managed(binding)
        return target
    }

    static func _trellisConvert(_ value: Any) -> MutableSet? {
        guard let items = CollectionConversion.items(of: value),
              let elements = CollectionConversion.convert(items, to: Element.self)
        else { return nil }
        let set = MutableSet()
        set.insert(objectsIn: elements)
        return set
    }

    var _trellisElements: [Any] { allElements.map { $0 as Any } }
}
