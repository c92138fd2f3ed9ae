/// The objects that link to an object through one property: the inverse side of a to-one,
/// `List`, `MutableSet` or `Map` relationship, computed from the backlink index.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
///
/// Read-only and live: it always reflects the current links. An origin that links several
/// times (the same dog twice in a list) appears once per link. Empty for an unmanaged object.
public struct LinkingObjects<Element: ObjectBase & RealmCollectionValue>: RandomAccessCollection,
    CustomStringConvertible
{
    /// The property of `Element` that links to the object.
    public var propertyName: String { source?.originProperty ?? declaredPropertyName }
    /// The name an unmanaged value was declared with; a managed value's source knows its own
    /// (so that a property read copies no string).
    private let declaredPropertyName: String
    /// Where a managed value reads from; nil when unmanaged. Made on every property read, so it
    /// holds only what `count` needs: the `Results` behind everything else is made on first use.
    let source: LinkingObjectsSource?

    /// The objects of `type` linking here through `propertyName` (the legacy declaration form).
    public init(fromType _: Element.Type, property propertyName: String) {
        declaredPropertyName = propertyName
        self.source = nil
    }

    /// A value over existing results (freezing, thawing, observing, thread-safe references):
    /// their source names the origin property.
    init(results: Results<Element>) {
        declaredPropertyName = ""
        self.source = LinkingObjectsSource(results: results, core: results.core)
    }

    init(source: LinkingObjectsSource) {
        declaredPropertyName = ""
        self.source = source
    }

    /// The linking objects as `Results` (made once per value and kept), or nil when unmanaged.
    var results: Results<Element>? {
        guard let source else { return nil }
        source.validateRead()
        if let made = source.results as? Results<Element> { return made }
        let made = Results<Element>(core: source.core, source: .linkingObjects(
            target: source.target, key: source.key, originProperty: source.originProperty), objectType: Element.self)
        source.results = made
        return made
    }

    /// The Realm of the target object, or nil when it is unmanaged.
    public var realm: Realm? { source.map { Realm(core: $0.core) } }

    /// Whether the Realm was invalidated since they were made (as `Results`: reading them then
    /// traps); deleting the target object does not invalidate them: they then read as empty.
    public var isInvalidated: Bool { source.map { $0.epoch != $0.core.epoch } ?? false }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of links (an origin linking twice counts twice), read without making the
    /// `Results`.
    public var count: Int {
        // Through optional chaining, which borrows the source: binding it would retain it.
        guard let hasResults = source?.hasResults else { return 0 }
        if hasResults || Element.self == DynamicObject.self { return results?.count ?? 0 }
        source?.validateRead()
        return source?.count(originType: Element.self) ?? 0
    }

    /// Whether no object links here.
    public var isEmpty: Bool { count == 0 }

    public subscript(position: Int) -> Element {
        guard let results else {
            // `\Dog.owners[0].name` read on a recording prototype (see KeyPathRecorder).
            if let element = KeyPathRecorder.element(Element.self) { return element }
            throwRealmException("Index \(position) is out of bounds (must be less than 0).")
        }
        // The stored count and the backlink index disagree only in a damaged file: within the
        // count, a position the index lacks reads as an unmanaged object of default values.
        if position >= results.count, position >= 0, position < count { return Element() }
        return results[position]
    }

    /// The position of `object`, or nil.
    public func index(of object: Element) -> Int? { results?.index(of: object) }

    /// Iterates the linking objects as they were when iteration began.
    public func makeIterator() -> IndexingIterator<[Element]> {
        if ObservationGate.mayTrack { source?.observeRead(originType: Element.self) }
        var elements = [Element]()
        if let results { for element in results { elements.append(element) } }
        // As many as `count` says (they disagree only in a damaged file, see the subscript), so
        // that an array built from this collection never traps.
        let count = count
        if elements.count > count { elements.removeLast(elements.count - count) }
        while elements.count < count { elements.append(Element()) }
        return elements.makeIterator()
    }

    /// `LinkingObjects<Person> <0x…> (\n\t[0] Person {…}\n)`, as Realm prints it.
    public var description: String { realmDescription(depth: RealmDescription.maximumDepth) }
}

/// What a managed `LinkingObjects` value reads: the target object, the origin property, and
/// the `Results` once something other than a count needed it. Not generic, so making one per
/// property read looks up no type metadata.
final class LinkingObjectsSource {
    // Unchecked: a source is confined to its Realm's thread (a frozen Realm's are never
    // repointed), and these are read on every count.
    let core: RealmCore
    /// The core's epoch when the source was made (``LinkingObjects/isInvalidated``). A source
    /// is repointed only by iteration accessors, which never outlive an `invalidate()`.
    let epoch: UInt64
    @exclusivity(unchecked) private(set) var target: Table
    @exclusivity(unchecked) private(set) var key: ObjectKey
    @exclusivity(unchecked) private(set) var originProperty: String
    /// The `LinkingObjects` field this was read from, when known: the core remembers where its
    /// origin column is per field (see ``RealmCore/backlinkOrigin(_:originType:originProperty:)``).
    @exclusivity(unchecked) private(set) var field: FieldInfo? {
        didSet { fieldColumn = Self.column(of: field) }
    }
    /// The wrapper column of ``field`` (see ``ClassInfo/linkingObjectsColumn(fieldIndex:)``);
    /// 0 (no LinkingObjects column) when the field is not known.
    @exclusivity(unchecked) private var fieldColumn = 0
    /// The `Results<Element>` of the value, made on first use. For a frozen Realm, whose values
    /// other threads read at the same time, made up front instead.
    var results: Any? {
        didSet { hasResults = results != nil }
    }
    /// Whether `results` was made (checked by `count` without copying the existential).
    private(set) var hasResults = false
    /// The stored count block `count` read last (see ``RealmCore/storedBacklinkCount(to:key:from:column:cache:)``):
    /// a source repointed at the next object of an iteration reads its count from it directly.
    @exclusivity(unchecked) private var countBlock: CachedCountBlock?

    init(core: RealmCore, target: Table, key: ObjectKey, originProperty: String, field: FieldInfo?) {
        self.core = core
        self.epoch = core.epoch
        self.target = target
        self.key = key
        self.originProperty = originProperty
        self.field = field
        fieldColumn = Self.column(of: field)
    }

    /// The wrapper column of a LinkingObjects `field`, 0 when it is not known.
    private static func column(of field: FieldInfo?) -> Int {
        field.map { ClassInfo.linkingObjectsColumn(fieldIndex: $0.index) } ?? 0
    }

    /// The source of existing results (freezing, thawing, observing, thread-safe references).
    init<Element>(results: Results<Element>, core: RealmCore) {
        self.core = core
        self.epoch = results.epoch
        if case .linkingObjects(let target, let key, let originProperty) = results.source {
            self.target = target
            self.key = key
            self.originProperty = originProperty
        } else {
            throwRealmException("Trellis internal error: LinkingObjects made from results of another kind.")
        }
        self.field = nil
        self.results = results
        self.hasResults = true
    }

    /// Makes this source, which nothing else references, the source of another object's value
    /// (see ``LinkingObjects/managedValue(_:_:readFrom:)``).
    func repoint(target: Table, key: ObjectKey, field: FieldInfo) {
        // Usually another object of the same class: only the key changes (no reference counted,
        // no string copied).
        if self.target !== target {
            self.target = target
            countBlock = nil
        }
        self.key = key
        if self.field !== field {
            self.originProperty = field.originProperty ?? ""
            self.field = field
            countBlock = nil
        }
        if hasResults { results = nil }
    }

    /// Points this source, which nothing else references, at `managed` when it already reads
    /// the LinkingObjects field of `column` of an object of the same class (an iteration reading
    /// the same property of each object): only the key changes. False otherwise.
    @inline(__always)
    func moveIfReading(column: Int, of managed: ManagedObject) -> Bool {
        guard fieldColumn == column, target === managed.table, core === managed.core, !hasResults else {
            return false
        }
        key = managed.key
        return true
    }

    /// Traps as ``Results/validateRead()`` does (Realm's linking objects are results) when
    /// `invalidate()` ended the read transaction the value was read in.
    @inline(__always)
    func validateRead() {
        if epoch != core.epoch { throwRealmException("Access to invalidated Results objects") }
    }

    /// The sum of the backlink counts: no origin row is read, nothing is allocated.
    func count(originType: ObjectBase.Type) -> Int {
        // The block read last holds this key's count, and nothing changed since (its target and
        // origin are this source's: repointing elsewhere forgets it). Read through `core`, an
        // immutable reference: no closure, so the caller retains nothing for the call.
        core.verifyThread()
        if ObservationGate.mayTrack { observeRead(originType: originType) }
        if core.writeTransaction == nil, core.readsStoredBacklinkCounts,
           let count = countBlock?.count(of: key, at: core.changeStamp), count <= 4096
        {
            return count
        }
        return countReadingTheBlock(originType: originType)
    }

    /// ``count(originType:)`` when the kept block does not answer: finds the origin column and
    /// reads the count's block (keeping it).
    private func countReadingTheBlock(originType: ObjectBase.Type) -> Int {
        // Borrowed: this source keeps its core, which keeps its tables.
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef { core in
            guard let origin = core.backlinkOrigin(field, originType: originType, originProperty: originProperty) else {
                return 0
            }
            return Unmanaged.passUnretained(target)._withUnsafeGuaranteedRef { target in
                core.backlinkCount(to: target, key: key, from: origin.table, column: origin.column, cache: &countBlock)
            }
        }
    }
}

extension LinkingObjects: Equatable {
    /// Equal when they are the same value (each property read makes a new one, as in Realm).
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        switch (lhs.source, rhs.source) {
        case (let a?, let b?): a === b
        case (nil, nil): lhs.declaredPropertyName == rhs.declaredPropertyName
        default: false
        }
    }
}

/// Marks `LinkingObjects` for `@Persisted(originProperty:)`.
public protocol _LinkingObjectsProperty: _Persistable {}

extension LinkingObjects: _Persistable, _CachedAccessor, _LinkingObjectsProperty {
    public static var _trellisTypeInfo: _PropertyTypeInfo {
        _PropertyTypeInfo(.linkingObjects, objectType: Element.self, swiftName: "LinkingObjects<\(Element.className())>")
    }

    public static func _trellisDefaultValue() -> Self { Self(fromType: Element.self, property: "") }

    /// The managed value, read through a row reader that knows its object (see
    /// ``_trellisReadComputed(of:_:)``, which the property read calls directly).
    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        guard let object = row.owner else {
            throwRealmException("Trellis internal error: LinkingObjects are not read from a row.")
        }
        return _trellisReadComputed(of: object, column)
    }

    /// The managed value of the LinkingObjects field of `column` (see
    /// ``ClassInfo/linkingObjectsColumn(fieldIndex:)``) of `object`, which the property read
    /// hands over borrowed: no row is read, no `Results` made yet.
    public static func _trellisReadComputed(of object: ObjectBase, _ column: Int) -> Self {
        // The common case first: an iteration reading this property of each object moves the
        // source it kept from the previous object (when the caller let go of the value) to this
        // one, without looking the field up.
        // The spare stays where it is: the value returned is its one new reference (a retain, and
        // no release).
        if object._isIterationAccessor, let managed = object._managed,
           isKnownUniquelyReferenced(&object._spareLinkingObjectsSource),
           let reusable = object._spareLinkingObjectsSource, reusable.moveIfReading(column: column, of: managed)
        {
            return Self(source: reusable)
        }
        guard let managed = object._managed, let index = ClassInfo.linkingObjectsFieldIndex(column: column)
        else {
            throwRealmException("Trellis internal error: LinkingObjects are not read from a row.")
        }
        // Borrowed: the object keeps its core, which keeps the table and its class info.
        return Unmanaged.passUnretained(managed.info)._withUnsafeGuaranteedRef { info in
            guard index < info.fields.count else {
                throwRealmException("Trellis internal error: LinkingObjects are not read from a row.")
            }
            return managedValue(managed, info.fields[index], readFrom: object)
        }
    }

    /// The value of `field` of a managed object: cheap to make; the `Results` come on first use,
    /// except for a frozen Realm (whose values other threads read at the same time).
    /// `object`: the object read, when known: an iteration accessor keeps the value's source as a
    /// spare, which the next read points at its target when nothing else references it (the
    /// caller let go of the value, as `dog.owners.count` does), so that a read allocates nothing.
    static func managedValue(_ managed: ManagedObject, _ field: FieldInfo, readFrom object: ObjectBase? = nil) -> Self {
        func newSource() -> LinkingObjectsSource {
            LinkingObjectsSource(core: managed.core, target: managed.table, key: managed.key,
                                 originProperty: field.originProperty ?? "", field: field)
        }
        // The core and table are borrowed from `managed` (the object keeps them): no retain.
        let isFrozen = Unmanaged.passUnretained(managed.core)._withUnsafeGuaranteedRef { $0.isFrozen }
        guard let object, object._isIterationAccessor, !isFrozen else {
            let value = Self(source: newSource())
            if isFrozen { _ = value.results }
            return value
        }
        // Moved out of the object first (no copy), so that it is uniquely referenced when the
        // caller let go.
        var spare: LinkingObjectsSource?
        swap(&spare, &object._spareLinkingObjectsSource)
        if isKnownUniquelyReferenced(&spare), let reusable = spare, reusable.core === managed.core {
            Unmanaged.passUnretained(managed.table)._withUnsafeGuaranteedRef {
                reusable.repoint(target: $0, key: managed.key, field: field)
            }
            object._spareLinkingObjectsSource = reusable
            return Self(source: reusable)
        }
        let source = newSource()
        object._spareLinkingObjectsSource = source
        return Self(source: source)
    }

    public static func _trellisEncode(_ value: LinkingObjects, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }

    /// LinkingObjects values are made afresh on each read (see ``managedValue(_:_:readFrom:)``).
    static func _trellisRepointAccessor(at slot: UnsafeMutableRawPointer, to object: ObjectBase, _ field: FieldInfo)
        -> Bool
    {
        false
    }

    static func _trellisMakeAccessor(_ object: ObjectBase, _ field: FieldInfo, into slot: UnsafeMutableRawPointer) {
        guard let managed = object._managed else {
            slot.initializeMemory(as: Self.self, to: _trellisDefaultValue())
            return
        }
        slot.initializeMemory(as: Self.self, to: managedValue(managed, field))
    }
}

/// The legacy declaration `let owners = LinkingObjects(fromType: Person.self, property: "dog")`,
/// a field like `let dogs = List<Dog>()` (see ``LegacyLinkingObjectsWitness``).
extension LinkingObjects: _LegacyFieldType {
    static var legacyWitness: any LegacyFieldWitness.Type { LegacyLinkingObjectsWitness<Element>.self }
}

extension Persisted where Value: _LinkingObjectsProperty {
    /// Declares the inverse of `originProperty`, a link property of the linking class.
    @inlinable
    public init(originProperty: String) {
        _storage = .unmanagedNoDefault
        _untouched = true
        declaration = PropertyDeclaration(originProperty: originProperty)
    }
}

extension ObjectBase {
    /// The objects of `type` linking to this object through `propertyName` (a to-one, List,
    /// MutableSet or Map property of `type`), without declaring a LinkingObjects property.
    public func linkingObjects<T: Object>(_ type: T.Type, forProperty propertyName: String) -> Results<T> {
        guard let managed = _managed else {
            throwRealmException("Linking objects are only available on managed objects: add '\(Swift.type(of: self).className())' "
                + "to a Realm first.")
        }
        let info = ClassInfo.unbound(for: type)
        guard let field = info.field(named: propertyName), field.isLink,
              field.typeInfo.objectClassName == managed.info.className
        else {
            throwRealmException("Property '\(info.className).\(propertyName)' does not exist or is not a link to "
                + "'\(managed.info.className)'.")
        }
        return Results(core: managed.core, source: .linkingObjects(target: managed.table, key: managed.key,
                                                                     originProperty: propertyName))
    }
}
