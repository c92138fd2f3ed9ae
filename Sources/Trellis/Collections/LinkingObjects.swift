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
    public let propertyName: String
    let results: Results<Element>?

    /// The objects of `type` linking here through `propertyName` (the legacy declaration form).
    public init(fromType _: Element.Type, property propertyName: String) {
        self.propertyName = propertyName
        self.results = nil
    }

    init(propertyName: String, results: Results<Element>) {
        self.propertyName = propertyName
        self.results = results
    }

    /// The Realm of the target object, or nil when it is unmanaged.
    public var realm: Realm? { results?.realm }

    /// Always false: like `Results`, linking objects are never invalidated; once the target
    /// object is deleted they read as empty.
    public var isInvalidated: Bool { false }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The number of links (an origin linking twice counts twice).
    public var count: Int { results?.count ?? 0 }

    public subscript(position: Int) -> Element {
        guard let results else {
            throwRealmException("Index \(position) is out of bounds (must be less than 0).")
        }
        return results[position]
    }

    /// The position of `object`, or nil.
    public func index(of object: Element) -> Int? { results?.index(of: object) }

    /// Iterates the linking objects as they were when iteration began.
    public func makeIterator() -> IndexingIterator<[Element]> {
        (results.map { Array($0) } ?? []).makeIterator()
    }

    public var description: String {
        "LinkingObjects<\(Element.className())> <\(count) objects>"
    }
}

extension LinkingObjects: Equatable {
    /// Equal when they are the same value (each property read makes a new one, as in Realm).
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        switch (lhs.results, rhs.results) {
        case (let a?, let b?): a == b
        case (nil, nil): lhs.propertyName == rhs.propertyName
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

    public static func _trellisRead(_ row: _RowReader, _ column: Int) -> Self {
        throwRealmException("Trellis internal error: LinkingObjects are not read from a row.")
    }

    public static func _trellisEncode(_ value: LinkingObjects, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }

    static func _trellisMakeAccessor(_ object: ObjectBase, _ field: FieldInfo, into slot: UnsafeMutableRawPointer) {
        guard let managed = object._managed else {
            slot.initializeMemory(as: Self.self, to: _trellisDefaultValue())
            return
        }
        let origin = field.originProperty ?? ""
        slot.initializeMemory(as: Self.self, to: Self(propertyName: origin, results: Results(
            core: managed.core, source: .linkingObjects(target: managed.table, key: managed.key, originProperty: origin),
            objectType: Element.self)))
    }
}

/// The legacy declaration `let owners = LinkingObjects(fromType: Person.self, property: "dog")`:
/// when the object becomes managed, the field is replaced by the live collection.
protocol _LegacyLinkingObjects: SendableMetatype {
    static func _trellisInstall(at field: UnsafeMutableRawPointer, object: ObjectBase)
}

extension LinkingObjects: _LegacyLinkingObjects {
    static func _trellisInstall(at field: UnsafeMutableRawPointer, object: ObjectBase) {
        guard let managed = object._managed else { return }
        let slot = field.assumingMemoryBound(to: LinkingObjects.self)
        let origin = slot.pointee.propertyName
        slot.pointee = LinkingObjects(propertyName: origin, results: Results(core: managed.core, source: .linkingObjects(
            target: managed.table, key: managed.key, originProperty: origin)))
    }
}

extension Persisted where Value: _LinkingObjectsProperty {
    /// Declares the inverse of `originProperty`, a link property of the linking class.
    @inlinable
    public init(originProperty: String) {
        storage = .unmanagedNoDefault
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
