/// Declares a property of a ``Projection``: a key path of the projected class, read from (and
/// written to) the projection's ``Projection/rootObject``, as Realm's `@Projected` does.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName              // the property itself
///     @Projected(\Person.lastName.localizedUppercase) var lastNameCaps  // a value derived from it
///     @Projected(\Person.address?.city) var homeCity             // through a link
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
/// ```
///
/// The key path must start with a persisted property of the class; a projection of anything
/// else traps with Realm's message when the projection is first made.
@propertyWrapper
public struct Projected<T: ObjectBase, Value>: AnyProjected {
    let keyPath: KeyPath<T, Value>

    var projectedKeyPath: AnyKeyPath { keyPath }

    /// `@Projected` works only on properties of ``Projection`` subclasses.
    @available(*, unavailable, message: "@Projected can only be used as a property on a Projection")
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used as a property on a Projection") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Projected can only be used as a property on a Projection") }
    }

    /// Reads the key path from the projection's root object; setting it writes the root object
    /// (inside a write transaction when the root is managed). A key path that cannot be written
    /// (a computed value such as `localizedUppercase`) traps.
    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get {
            projection.rootObject[keyPath: projection[keyPath: storageKeyPath].keyPath]
        }
        set {
            guard let writable = projection[keyPath: storageKeyPath].keyPath as? ReferenceWritableKeyPath<T, Value>
            else {
                throwRealmException("KeyPath is not writable")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }

    /// A projected property reading `projectedKeyPath` from the root object.
    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        keyPath = projectedKeyPath
    }

    /// The persisted properties the key path goes through, dotted (`"address.city"`; for a
    /// projected collection also its elements' property: `"friends.firstName"`), and the path
    /// as Realm names it (`_name(for:)`: a projected collection stops at the collection,
    /// `"friends"`).
    func originKeyPaths(label: String) -> (dotted: String, realmName: String) {
        let recorder = KeyPathRecorder()
        let prototype = T()
        prototype._record(with: recorder)
        let value = recorder.reading { prototype[keyPath: keyPath] }
        let names = recorder.names
        guard !names.isEmpty else {
            throwRealmException("@Projected property '\(label)' must be a part of Realm object")
        }
        let realmName = names.joined(separator: ".")
        guard let collection = value as? any _ProjectedElementPath else { return (realmName, realmName) }
        return (realmName + "." + collection.elementPropertyName, realmName)
    }
}

/// A `@Projected` property, seen without its types.
protocol AnyProjected {
    var projectedKeyPath: AnyKeyPath { get }
    func originKeyPaths(label: String) -> (dotted: String, realmName: String)
}

/// A projected collection, which names the property of the elements it reads.
protocol _ProjectedElementPath {
    var elementPropertyName: String { get }
}
