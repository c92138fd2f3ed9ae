import Foundation

/// An ordered collection of values or objects that keeps duplicates: Realm's to-many
/// relationship.
///
/// ```swift
/// class Person: Object {
///     @Persisted var dogs: List<Dog>
/// }
/// try realm.write { person.dogs.append(rex) }
/// ```
///
/// An unmanaged list is a plain array. Once its object is managed, the list is stored in the
/// database as object keys (for objects) or values, every read reflects the current snapshot,
/// and every mutation must happen inside a write transaction. Iteration walks a copy taken when
/// it began.
public final class List<Element: RealmCollectionValue>: RandomAccessCollection, MutableCollection,
    CustomStringConvertible
{
    // The contents are kept in two stored properties rather than one `CollectionStorage<[Element]>`:
    // code generic over `Element` (every call from an app's module) looks a generic enum's
    // type up at run time on each use, about 650 instructions per `append` with the array's.
    // Unchecked: a list is used on its Realm's thread (an unmanaged one by its one owner).
    /// The elements of an unmanaged list; empty once the list is managed.
    @usableFromInline @exclusivity(unchecked) var unmanagedElements: [Element]
    /// Where a managed list's elements are (`.unmanaged` while in memory).
    @exclusivity(unchecked) private var backing: CollectionBacking
    /// The element accessor the last iteration handed out (made on the first iteration of a
    /// list of objects).
    @exclusivity(unchecked) private var spareElementBox: SpareAccessor?

    /// The box of ``spareElementBox``, made when first needed.
    private func spareElement() -> SpareAccessor {
        if let box = spareElementBox { return box }
        let box = SpareAccessor()
        spareElementBox = box
        return box
    }

    /// The contents, in memory or stored (see ``CollectionStorage``).
    var storage: CollectionStorage<[Element]> {
        get {
            switch backing {
            case .unmanaged: .unmanaged(unmanagedElements)
            case .managed(let binding): .managed(binding)
            case .nested(let nested): .nested(nested)
            }
        }
        set {
            switch newValue {
            case .unmanaged(let elements):
                backing = .unmanaged
                unmanagedElements = elements
            case .managed(let binding):
                unmanagedElements = []
                backing = .managed(binding)
            case .nested(let nested):
                unmanagedElements = []
                backing = .nested(nested)
            }
        }
    }

    /// Creates an empty, unmanaged list.
    public init() {
        unmanagedElements = []
        backing = .unmanaged
    }

    init(binding: CollectionBinding) {
        unmanagedElements = []
        backing = .managed(binding)
    }

    /// A list nested in an `AnyRealmValue` (`Element` is `AnyRealmValue`).
    init(nested: NestedCollectionBinding) {
        unmanagedElements = []
        backing = .nested(nested)
    }

    /// Points the managed list accessor in `slot` at `field` of `object` when nothing else
    /// references it: no other strong, weak or unowned reference, so nobody can see it change
    /// (see ``Persisted/repointCollection(_:of:fieldIndex:)``). Saves an allocation, an
    /// initialisation and a deinitialisation per owner whose list an iteration reads. Touches
    /// `backing` only: the generic `storage` would look its type up at run time.
    static func _trellisRepointAccessor(at slot: UnsafeMutableRawPointer, to object: ObjectBase, _ field: FieldInfo)
        -> Bool
    {
        let accessor = slot.assumingMemoryBound(to: List<Element>.self)
        guard SoleReference.isOnlyReference(&accessor.pointee), case .managed = accessor.pointee.backing,
              object._managed != nil
        else { return false }
        accessor.pointee.backing = .managed(CollectionBinding(object: object, field: field))
        return true
    }

    /// Whether the list is in memory (its object is not managed): then ``unmanagedElements``
    /// are its elements.
    @usableFromInline var _isUnmanaged: Bool {
        if case .unmanaged = backing { return true }
        return false
    }

    /// Makes an unmanaged list the accessor of the stored list `binding` names (its elements
    /// were stored there), like setting ``storage`` without its generic enum.
    func becomeManaged(_ binding: CollectionBinding) {
        unmanagedElements = []
        backing = .managed(binding)
    }

    /// The elements of a nested list, read now.
    private func nestedElements(_ nested: NestedCollectionBinding) -> [Element] {
        nested.verifyReadable("List")
        return nested.listElements() as? [Element] ?? []
    }

    // MARK: - State

    /// The Realm managing the list, or nil when it is unmanaged.
    public var realm: Realm? { managingRealm }

    /// Whether the object owning the list was deleted (or its Realm invalidated).
    public var isInvalidated: Bool { ownerIsGone }

    // MARK: - Reading

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of elements.
    public var count: Int {
        switch backing {
        case .unmanaged: return unmanagedElements.count
        case .managed(let binding):
            binding.verifyReadable()
            return binding.core.listCount(binding.location)
        case .nested(let nested):
            nested.verifyReadable("List")
            return nested.count
        }
    }

    /// The element at `position`; traps with Realm's message when out of bounds. Setting it
    /// replaces the element (inside a write when managed).
    public subscript(position: Int) -> Element {
        get {
            switch backing {
            case .unmanaged:
                // `\Person.dogs[0].name` read on a recording prototype (see KeyPathRecorder).
                if position >= unmanagedElements.count, let element = KeyPathRecorder.element(Element.self) {
                    return element
                }
                CollectionIndex.check(position, count: unmanagedElements.count)
                return unmanagedElements[position]
            case .managed(let binding):
                binding.verifyReadable()
                let header = binding.core.listHeader(binding.location)
                CollectionIndex.check(position, count: header.count)
                guard let bytes = binding.core.listElement(binding.location, at: position, header: header) else {
                    throwRealmException("Trellis could not read element \(position) of '\(binding.location.field.name)'.")
                }
                return binding.decode(bytes, nestedAt: .listElement(binding.location, index: position))
            case .nested(let nested):
                let elements = nestedElements(nested)
                CollectionIndex.check(position, count: elements.count)
                return elements[position]
            }
        }
        set {
            replace(index: position, object: newValue)
        }
    }

    /// The elements in `bounds` (get), or replaces them with the elements of another slice,
    /// which may be shorter or longer (set, inside a write when managed): Realm's
    /// `list[1..<4] = other[0..<2]`, which `MutableCollection`'s own setter would refuse.
    public subscript(bounds: Range<Int>) -> Slice<List> {
        get { Slice(base: self, bounds: bounds) }
        set { replaceSubrange(bounds, with: Array(newValue)) }
    }

    /// The position of the first element equal to `object` (for objects: the same row), or nil.
    public func index(of object: Element) -> Int? {
        switch storage {
        case .unmanaged(let elements):
            return elements.firstIndex(of: object)
        case .managed(let binding):
            binding.verifyReadable()
            guard let wanted = binding.lookupKey(object) else { return nil }
            return binding.core.listElements(binding.location).firstIndex { $0.elementsEqual(wanted) }
        case .nested(let nested):
            return nestedElements(nested).firstIndex(of: object)
        }
    }

    /// The position of the first element for which `predicate` is true, or nil.
    public func index(matching predicate: (Element) throws -> Bool) rethrows -> Int? {
        try firstIndex(where: predicate)
    }

    /// Iterates the elements the list held when iteration began.
    ///
    /// Inlined into the app's module, where `Element` is known: an iterator over objects is made
    /// and destroyed there with no run-time lookup of its generic type. Everything else is made
    /// by ``_makeIterator()``.
    @inlinable
    public func makeIterator() -> Iterator {
        if let walk = _objectWalk() { return Iterator(objects: walk) }
        return _makeIterator()
    }

    /// The walk over a managed list of objects (see ``ListObjectReader``); nil for any other list.
    @usableFromInline
    func _objectWalk() -> _ListObjectWalk? {
        guard case .managed(let binding) = backing else { return nil }
        binding.verifyReadable()
        guard let reader = ListObjectReader(binding, elementType: Element.self, spare: spareElement) else { return nil }
        return _ListObjectWalk(core: binding.core, keys: binding.core.listLinkKeys(binding.location), reader: reader)
    }

    /// The iterator of a list that ``_objectWalk()`` does not walk.
    @usableFromInline
    func _makeIterator() -> Iterator {
        switch backing {
        case .unmanaged:
            return Iterator(source: .array(unmanagedElements))
        case .managed(let binding):
            binding.verifyReadable()
            let elements = binding.core.listElements(binding.location)
            return Iterator(source: .snapshot(binding, ElementSnapshot(elements)))
        case .nested(let nested):
            return Iterator(source: .array(nestedElements(nested)))
        }
    }

    /// Walks a snapshot of the list.
    ///
    /// For a list of objects the walk is not generic (``_ListObjectWalk``) and `next()` is inlined
    /// into the caller, so handing out each object costs no generic value-witness call.
    public struct Iterator: IteratorProtocol {
        @usableFromInline
        enum Source {
            case array([Element])
            case snapshot(CollectionBinding, ElementSnapshot)
            case objects
        }
        @usableFromInline let source: Source
        @usableFromInline var position = 0
        /// For a list of objects: its keys, made into accessors without generic code.
        @usableFromInline var objects: _ListObjectWalk?

        init(source: Source) {
            self.source = source
        }

        @inlinable
        init(objects: _ListObjectWalk) {
            self.source = .objects
            self.objects = objects
        }

        @inlinable
        public mutating func next() -> Element? {
            guard objects != nil else { return nextValue() }
            // `Element` is the accessors' class (see ListObjectReader.init).
            return objects?.next().map { unsafeBitCast($0, to: Element.self) }
        }

        /// The next element of an unmanaged list or a list of values.
        @usableFromInline
        mutating func nextValue() -> Element? {
            switch source {
            case .array(let elements):
                guard position < elements.count else { return nil }
                position += 1
                return elements[position - 1]
            case .snapshot(let binding, let snapshot):
                guard position < snapshot.count else { return nil }
                position += 1
                return binding.decode(snapshot[position - 1], nestedAt: .listElement(binding.location, index: position - 1))
            case .objects:
                return nil
            }
        }
    }

    /// `List<Dog> <0x…> (\n\t[0] Dog {…},\n…\n)`, as Realm prints it.
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }

    /// The elements as a Swift array.
    var allElements: [Element] {
        switch storage {
        case .unmanaged(let elements): elements
        case .managed: Array(self)
        case .nested(let nested): nestedElements(nested)
        }
    }
}

extension List: Equatable {
    /// Unmanaged lists are equal when their elements are; managed lists when they are the same
    /// stored list.
    public static func == (lhs: List, rhs: List) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.unmanaged(let a), .unmanaged(let b)): a == b
        case (.managed(let a), .managed(let b)): a.isSameCollection(as: b)
        case (.nested(let a), .nested(let b)): a.isSame(as: b)
        default: false
        }
    }
}

extension List {
    /// Whether `object` is a List equal to this one by `==` (Realm's `isEqual(_:)`):
    /// unmanaged ones by their contents, managed ones when they are the same stored list.
    public func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? List<Element> else { return false }
        return self == other
    }
}
