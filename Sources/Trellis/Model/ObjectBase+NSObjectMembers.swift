import Foundation

// Realm's `NSObject` members on model objects. Declared in an extension (statically
// dispatched, not overridable): added to `ObjectBase`'s class body they would grow the vtable of
// every model class.

extension ObjectBase {
    /// Whether `object` equals this one (Realm's `NSObject.isEqual(_:)`): for objects, `==`
    /// (the same accessor, or the same row of a class with a primary key or of a frozen
    /// version); otherwise the same instance. Differs: Realm's can be overridden.
    public func isEqual(_ object: Any?) -> Bool {
        if let lhs = self as? Object, let rhs = object as? Object { return lhs == rhs }
        guard let object else { return false }
        return self === (object as AnyObject)
    }

    /// The hash of the object, consistent with ``isEqual(_:)`` (Realm's `NSObject.hash`).
    public var hash: Int {
        if let object = self as? Object { return object.hashValue }
        return ObjectIdentifier(self).hashValue
    }
}
