/// `Optional<T>` for a class `T` that is an ``Object``: the value type of every to-one property
/// to a top-level object.
protocol OptionalObjectValue {}
extension Optional: OptionalObjectValue where Wrapped: Object {}

/// A to-one property's wrapper, read and let go of without generic code when its object is
/// added. Every `Persisted<T?>` with `T` an ``Object`` class has the layout of
/// `Persisted<Object?>`: the fields before its storage do not depend on the value type, and an
/// optional class reference is laid out the same whatever its class. So one function,
/// compiled here, serves them all, where `Persisted<T?>`'s own witness, generic over a type
/// the library does not know, looks up the metadata of `Persisted<T?>` and its storage on every
/// object added (``FieldInfo/holdsOptionalObject`` says which fields qualify; their layout is
/// checked when the class is discovered).
enum ObjectLinkField {
    /// Whether `Persisted<Value>` qualifies: `Value` is an optional `Object` class and the
    /// wrapper's layout is `Persisted<Object?>`'s.
    static func qualifies<Value: _Persistable>(_ valueType: Value.Type) -> Bool {
        valueType is any OptionalObjectValue.Type
            && MemoryLayout<Persisted<Value>>.size == MemoryLayout<Persisted<Object?>>.size
            && MemoryLayout<Persisted<Value>>.alignment == MemoryLayout<Persisted<Object?>>.alignment
    }

    /// `Persisted<Object?>.encodeUnmanagedAndRelease(at:_:)`, compiled here for that one type,
    /// for the wrapper at `field`: the link to the object it holds (added first if it is
    /// unmanaged), or null; the wrapper then reads as managed.
    static func encodeUnmanagedAndRelease(at field: UnsafeMutableRawPointer, _ context: _EncodingContext)
        -> _StoredValue
    {
        Persisted<Object?>.encodeUnmanagedAndRelease(at: field, context)
    }
}
