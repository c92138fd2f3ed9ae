/// A frozen object or collection, marked `Sendable` so it can cross actors and tasks.
///
/// ```swift
/// let dog = Frozen(realm.objects(Dog.self).first!.freeze())
/// await printer.show(dog)          // another actor reads dog.value.name
/// ```
///
/// A frozen value is an immutable snapshot: its Realm pins one version, reads it without
/// changing any shared state, and refuses writes. That is what makes sharing it safe; the
/// initializer checks that the value is frozen.
public struct Frozen<Value: ThreadConfined>: @unchecked Sendable {
    // @unchecked Sendable: `value` is frozen (checked in init), and frozen Realms are
    // immutable and readable from any thread (see `Realm.freeze()`).
    /// The frozen value.
    public let value: Value

    /// Wraps `value`, which must be frozen (call `freeze()` first).
    public init(_ value: Value) {
        guard value.isFrozen else {
            throwRealmException("Frozen(_:) needs a frozen value: call freeze() on it first.")
        }
        self.value = value
    }
}
