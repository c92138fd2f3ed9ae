import Foundation

/// The values of a ``FailableCustomPersistable`` type's persisted type that its
/// `init?(persistedValue:)` refuses, met while ``Realm/create(_:value:update:)`` fills the
/// objects it makes.
///
/// Realm stores such a value as given (it writes the persisted type's value, whatever the Swift
/// type makes of it): only reading the property or element then traps, or reads nil where the
/// property or element is optional. A Trellis object is filled in memory first, where a refused
/// value has no Swift value to be held as, so `create` collects them here instead of trapping:
/// the property is left as it was, and once the objects are added each collected value is
/// written as its persisted type's value (through the class's ``DynamicObject`` accessor, which
/// reads and writes persisted types).
///
/// An unmanaged object made with `init(value:)` collects nothing: there a refused value traps
/// (or is nil in an optional property or element), as it does where Realm holds the Swift value.
final class RefusedPersistedValues {
    /// A property whose given value held a refused value, to write once its object is added.
    private struct Pending {
        let object: ObjectBase
        let field: FieldInfo
        let value: Any?
    }

    // Unchecked: a thread's collector is used only on that thread.
    /// Whether a `create` is filling objects on this thread.
    @exclusivity(unchecked) private var isActive = false
    /// Whether a value was refused while the current property's value was converted.
    @exclusivity(unchecked) private var refusedInField = false
    @exclusivity(unchecked) private var pending: [Pending] = []

    /// The key of each thread's collector, made on the thread's first `create` and kept (one
    /// allocation per thread, none per `create`), released when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { value in
            // Linux hands the destructor an optional pointer, Darwin a non-optional one: this
            // line compiles for both.
            let pointer: UnsafeMutableRawPointer? = value
            guard let pointer else { return }
            Unmanaged<RefusedPersistedValues>.fromOpaque(pointer).release()
        }
        return key
    }()

    /// This thread's collector, once a `create` has run on it.
    private static var threadCollector: RefusedPersistedValues? {
        pthread_getspecific(key).map { Unmanaged<RefusedPersistedValues>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The collector of the `create` running on this thread, if any.
    static var current: RefusedPersistedValues? {
        guard let collector = threadCollector, collector.isActive else { return nil }
        return collector
    }

    /// Runs `body` (which fills and adds the objects of one `create`) collecting refused values,
    /// then writes them to the objects, now managed, of `core`.
    static func collecting<R>(in core: RealmCore, _ body: () -> R) -> R {
        let collector: RefusedPersistedValues
        if let existing = threadCollector {
            collector = existing
        } else {
            collector = RefusedPersistedValues()
            pthread_setspecific(key, Unmanaged.passRetained(collector).toOpaque())
        }
        // A `create` inside another's (an initializer's own) keeps the outer one's values.
        let wasActive = collector.isActive
        let first = collector.pending.count
        collector.isActive = true
        let result = body()
        collector.isActive = wasActive
        if collector.pending.count > first { collector.writePending(core, from: first) }
        return result
    }

    /// Notes that a value was refused (see ``ValueConversion/convert(_:to:)``).
    func noteRefusal() { refusedInField = true }

    /// Sets `field` of the unmanaged `object` with `set`; when its value held a refused value,
    /// keeps it to write once the object is added and answers true.
    func setting(_ field: FieldInfo, of object: ObjectBase, to value: Any?, _ set: () -> Bool) -> Bool {
        // A linked object given as a dictionary is filled inside `set`, with its own properties.
        let outer = refusedInField
        refusedInField = false
        defer { refusedInField = outer }
        let stored = set()
        if refusedInField {
            pending.append(Pending(object: object, field: field, value: value))
            return true
        }
        return stored
    }

    /// Writes each value collected from `first` on as its persisted type's value.
    private func writePending(_ core: RealmCore, from first: Int) {
        let entries = pending[first...]
        pending.removeSubrange(first...)
        for entry in entries {
            guard let managed = entry.object._managed,
                  let table = core.dynamicTable(named: managed.info.className, create: false)
            else {
                throwRealmException("Trellis internal error: '\(entry.field.name)' of a created object could not be "
                    + "stored.")
            }
            let stored = core.accessor(DynamicObject.self, table: table, key: managed.key)
            // A Realm that has the model class names the properties as the model does.
            stored[entry.field.name] = Self.persistedForm(entry.value)
        }
    }

    /// `value` with every custom persistable value (at any depth of arrays and dictionaries)
    /// replaced by its persisted value: what the persisted type's property takes.
    private static func persistedForm(_ value: Any?) -> Any? {
        guard let value = ValueConversion.unwrapped(value) else { return NSNull() }
        if let persisted = CustomPersistableArgument.persisted(value) { return persisted }
        if let array = value as? [Any] { return array.map { persistedForm($0) ?? NSNull() } }
        if let dictionary = value as? [String: Any] { return dictionary.mapValues { persistedForm($0) ?? NSNull() } }
        return value
    }
}
