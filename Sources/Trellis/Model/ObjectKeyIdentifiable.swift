/// Gives Realm objects a stable `Identifiable` identity, as Realm's protocol of the same name.
///
/// Declare a model class as conforming and it gets an `id` that SwiftUI-style code
/// (`ForEach(results)`) and diffing code can rely on:
///
/// ```swift
/// class Todo: Object, ObjectKeyIdentifiable {
///     @Persisted var name = ""
/// }
/// ```
///
/// For a managed object, every accessor of the same stored object has the same `id` (the
/// object's key in its class's table), so `id` agrees with ``Object/isSameObject(as:)``. For an
/// unmanaged object it is the object's identity in memory.
public protocol ObjectKeyIdentifiable: Identifiable {
    /// The stable identity of the entity associated with `self`.
    var id: UInt64 { get }
}

extension ObjectKeyIdentifiable where Self: ObjectBase {
    /// The object's key when managed (the same for every accessor of that object), otherwise
    /// its address.
    public var id: UInt64 {
        if let managed = _managed { return managed.key }
        return UInt64(UInt(bitPattern: ObjectIdentifier(self).hashValue))
    }
}
