import Foundation

/// A property that holds a live object or collection across threads, resolved in the reading
/// thread's Realm at each access (Realm's `@ThreadSafe`).
///
/// ```swift
/// @ThreadSafe var person: Person?
/// person = realm.objects(Person.self).first     // on one thread
/// DispatchQueue.global().async {
///     print(self.person?.name ?? "deleted")      // resolved in this thread's Realm
/// }
/// ```
///
/// Reading opens (or reuses) a Realm of the value's configuration on the calling thread and
/// returns the value there, or nil once it was deleted (the property then stays nil). Setting
/// an unmanaged object traps, as a ``ThreadSafeReference`` to it does.
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: @unchecked Sendable {
    // @unchecked Sendable: the reference and configuration are only touched under the lock;
    // a ThreadSafeReference and a Configuration may cross threads.
    private let lock = NSLock()
    private var reference: ThreadSafeReference<T>?
    private var configuration: Realm.Configuration?

    /// The value, resolved in a Realm on the calling thread; nil when none was set or it was
    /// deleted.
    public var wrappedValue: T? {
        get {
            lock.lock()
            defer { lock.unlock() }
            guard let reference, let configuration else { return nil }
            let realm: Realm
            do {
                realm = try Realm(configuration: configuration)
            } catch {
                throwRealmException("@ThreadSafe could not open the Realm of its value on this thread: \(error)")
            }
            guard let value = realm.resolve(reference) else {
                self.reference = nil
                self.configuration = nil
                return nil
            }
            // A reference resolves once: keep a new one for the next access.
            self.reference = ThreadSafeReference(to: value)
            return value
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            guard let newValue else {
                reference = nil
                configuration = nil
                return
            }
            // Realm's message for an unmanaged value (its @ThreadSafe checks before making a reference).
            if newValue.realm == nil {
                throwRealmException("Only managed objects may be wrapped as thread safe.")
            }
            let made = ThreadSafeReference(to: newValue)
            configuration = newValue.realm?.configuration
            reference = made
        }
    }

    /// Holds `wrappedValue` (managed, or nil).
    public init(wrappedValue: T?) {
        self.wrappedValue = wrappedValue
    }
}
