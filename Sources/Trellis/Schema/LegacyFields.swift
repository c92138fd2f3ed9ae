import Foundation

/// Stored properties declared without `@Persisted`, the way Realm code written before it
/// declares them: `let dogs = List<Dog>()`, `let tags = MutableSet<String>()`,
/// `let scores = Map<String, Int>()`, `let age = RealmProperty<Int?>()`,
/// `let weight = RealmOptional<Double>()`. Schema discovery finds them by their type, like
/// `@Persisted` fields, and keeps their Swift name as the property name.
protocol _LegacyFieldType: SendableMetatype {
    /// The witness that reads and writes such a field.
    static var legacyWitness: any LegacyFieldWitness.Type { get }
}

/// A witness for a legacy field: it also makes a new accessor's field live.
protocol LegacyFieldWitness: PersistedFieldWitness {
    /// Binds the field of a managed accessor to its row. `isNewAccessor`: the accessor was just
    /// made for an existing row (its collection field is still the empty one `init()` made).
    static func install(at field: UnsafeMutableRawPointer, object: ObjectBase, info: FieldInfo, isNewAccessor: Bool)
    /// The object the field holds (the `List`, `MutableSet`, `Map`, `RealmProperty` or
    /// `RealmOptional` itself): what a Swift key path to the field reads. Nil for a value
    /// (`LinkingObjects` is a struct).
    static func holder(at field: UnsafeRawPointer) -> AnyObject?
    /// Whether `read`, what a Swift key path read on a recording prototype, is this field's
    /// value: the object it holds, or for `LinkingObjects` (a struct) a value of the same element
    /// type and origin property.
    static func isValue(_ read: Any, at field: UnsafeRawPointer) -> Bool
}

extension LegacyFieldWitness {
    static var isLegacyField: Bool { true }

    static func isValue(_ read: Any, at field: UnsafeRawPointer) -> Bool {
        guard type(of: read) is AnyObject.Type, let holder = holder(at: field) else { return false }
        return holder === (read as AnyObject)
    }
}

extension List: _LegacyFieldType { static var legacyWitness: any LegacyFieldWitness.Type { LegacyCollectionWitness<List>.self } }
extension MutableSet: _LegacyFieldType {
    static var legacyWitness: any LegacyFieldWitness.Type { LegacyCollectionWitness<MutableSet>.self }
}
extension Map: _LegacyFieldType { static var legacyWitness: any LegacyFieldWitness.Type { LegacyCollectionWitness<Map>.self } }
extension RealmProperty: _LegacyFieldType {
    static var legacyWitness: any LegacyFieldWitness.Type { LegacyValueWitness<RealmProperty>.self }
}
@available(*, deprecated)
extension RealmOptional: _LegacyFieldType {
    static var legacyWitness: any LegacyFieldWitness.Type { LegacyValueWitness<RealmOptional>.self }
}

// MARK: - Collections

/// A `let list = List<T>()` field: the field holds the collection itself.
enum LegacyCollectionWitness<C: _CollectionProperty & _Persistable & _CollectionAssignable>: LegacyFieldWitness {
    static var valueTypeInfo: _PropertyTypeInfo { C._trellisTypeInfo }
    /// The field holds its collection itself: no accessor is made for it.
    static var cachedAccessorType: (any _CachedAccessor.Type)? { nil }
    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration { PropertyDeclaration() }

    private static func collection(_ field: UnsafeRawPointer) -> C { field.assumingMemoryBound(to: C.self).pointee }
    static func holder(at field: UnsafeRawPointer) -> AnyObject? { collection(field) }

    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { collection(field) }
    static func isUntouched(at field: UnsafeRawPointer) -> Bool { false }

    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool {
        guard let converted = ValueConversion.convert(value, to: C.self) else { return false }
        collection(field).storage = converted.storage
        return true
    }

    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {
        let attached = C._trellisAttach(collection(field), to: binding, session: session)
        if attached !== collection(field) { field.assumingMemoryBound(to: C.self).pointee = attached }
    }

    static func markManaged(at field: UnsafeMutableRawPointer) {}
    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? { nil }

    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? {
        collection(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset)
    }

    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) {
        let pointer = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset
        if let managed = object._managed {
            guard let converted = ValueConversion.convert(value, to: C.self) else {
                throwRealmException("Invalid value '\(value.map { "\($0)" } ?? "nil")' for '\(C._trellisTypeInfo.swiftName)' "
                    + "property '\(type(of: object).className()).\(field.name)'.")
            }
            managed.core.verifyInWrite()
            C._trellisAssign(converted, to: object, field: field)
        } else if !setUnmanaged(at: pointer, value) {
            throwRealmException("Invalid value '\(value.map { "\($0)" } ?? "nil")' for '\(C._trellisTypeInfo.swiftName)' "
                + "property '\(type(of: object).className()).\(field.name)'.")
        }
    }

    static func install(at field: UnsafeMutableRawPointer, object: ObjectBase, info: FieldInfo, isNewAccessor: Bool) {
        // An object being added gets its collection attached with its contents instead.
        guard isNewAccessor else { return }
        collection(field).storage = .managed(CollectionBinding(object: object, field: info))
    }
}

// MARK: - RealmProperty and RealmOptional

/// What `RealmProperty` and `RealmOptional` share: a state holding their value.
protocol _LegacyValueHolder: AnyObject {
    associatedtype Stored: _Persistable
    init()
    var legacyState: LegacyValueState<Stored> { get }
}

extension RealmProperty: _LegacyValueHolder {
    var legacyState: LegacyValueState<Value> { state }
}

@available(*, deprecated)
extension RealmOptional: _LegacyValueHolder {
    convenience init() { self.init(nil) }
    var legacyState: LegacyValueState<Wrapped?> { state }
}

/// A `let age = RealmProperty<Int?>()` field: a scalar column read through the holder.
enum LegacyValueWitness<H: _LegacyValueHolder>: LegacyFieldWitness {
    static var valueTypeInfo: _PropertyTypeInfo { H.Stored._trellisTypeInfo }
    static var cachedAccessorType: (any _CachedAccessor.Type)? { nil }
    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration { PropertyDeclaration() }

    private static func state(_ field: UnsafeRawPointer) -> LegacyValueState<H.Stored> {
        field.assumingMemoryBound(to: H.self).pointee.legacyState
    }
    static func holder(at field: UnsafeRawPointer) -> AnyObject? { field.assumingMemoryBound(to: H.self).pointee }

    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        H.Stored._trellisEncode(state(field).unmanagedValue, context)
    }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { state(field).unmanagedValue }
    static func isUntouched(at field: UnsafeRawPointer) -> Bool { false }

    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool {
        guard let converted = ValueConversion.convert(value, to: H.Stored.self) else { return false }
        state(field).value = converted
        return true
    }

    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {}
    static func markManaged(at field: UnsafeMutableRawPointer) {}

    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? {
        ValueConversion.unwrapped(H.Stored._trellisRead(_RowReader(row: row, core: core), column))
    }

    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? {
        ValueConversion.unwrapped(state(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset).value)
    }

    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) {
        guard let converted = ValueConversion.convert(value, to: H.Stored.self) else {
            throwRealmException("Invalid value '\(value.map { "\($0)" } ?? "nil")' for '\(H.Stored._trellisTypeInfo.swiftName)' "
                + "property '\(type(of: object).className()).\(field.name)'.")
        }
        state(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset).value = converted
    }

    static func install(at field: UnsafeMutableRawPointer, object: ObjectBase, info: FieldInfo, isNewAccessor: Bool) {
        state(field).bind(to: object, field: info)
    }
}

// MARK: - LinkingObjects

/// A `let owners = LinkingObjects(fromType: Person.self, property: "dog")` field: a computed
/// property of the schema like `@Persisted(originProperty:) var owners`, named by the Swift
/// name, usable by name (`obj["owners"]`) and in key paths (`observe(keyPaths: ["owners"])`).
/// The field holds its collection itself; a managed accessor's is replaced by the live one.
enum LegacyLinkingObjectsWitness<Element: ObjectBase & RealmCollectionValue>: LegacyFieldWitness {
    static var valueTypeInfo: _PropertyTypeInfo { LinkingObjects<Element>._trellisTypeInfo }
    static var cachedAccessorType: (any _CachedAccessor.Type)? { nil }

    static func holder(at field: UnsafeRawPointer) -> AnyObject? { nil }
    static func isValue(_ read: Any, at field: UnsafeRawPointer) -> Bool {
        (read as? LinkingObjects<Element>)?.propertyName == value(field).propertyName
    }
    private static func value(_ field: UnsafeRawPointer) -> LinkingObjects<Element> {
        field.assumingMemoryBound(to: LinkingObjects<Element>.self).pointee
    }

    static func declaration(at field: UnsafeRawPointer) -> PropertyDeclaration {
        PropertyDeclaration(originProperty: value(field).propertyName)
    }

    static func encodeUnmanaged(at field: UnsafeMutableRawPointer, _ context: _EncodingContext) -> _StoredValue {
        _StoredValue(.none)
    }
    static func unmanagedValue(at field: UnsafeMutableRawPointer) -> Any { value(field) }
    static func isUntouched(at field: UnsafeRawPointer) -> Bool { false }
    /// Linking objects are computed: nothing is stored (Realm ignores them in initial values).
    static func setUnmanaged(at field: UnsafeMutableRawPointer, _ value: Any?) -> Bool { true }
    static func markManaged(at field: UnsafeMutableRawPointer) {}
    static func storedValue(_ row: RowView, core: RealmCore, column: Int) -> Any? { nil }

    static func dynamicGet(_ object: ObjectBase, _ field: FieldInfo) -> Any? {
        if let managed = object._managed { return LinkingObjects<Element>.managedValue(managed, field) }
        return value(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) + field.offset)
    }

    static func dynamicSet(_ object: ObjectBase, _ field: FieldInfo, _ value: Any?) {
        throwRealmException("Cannot set linking objects property '\(type(of: object).className()).\(field.name)': "
            + "it is read-only.")
    }

    static func attachCollection(at field: UnsafeMutableRawPointer, binding: CollectionBinding, session: AddSession) {}

    static func install(at field: UnsafeMutableRawPointer, object: ObjectBase, info: FieldInfo, isNewAccessor: Bool) {
        guard let managed = object._managed else { return }
        field.assumingMemoryBound(to: LinkingObjects<Element>.self).pointee =
            LinkingObjects<Element>.managedValue(managed, info)
    }
}
