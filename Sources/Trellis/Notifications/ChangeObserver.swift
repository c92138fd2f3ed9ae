/// One observation: the state it last reported and how to report what changed since.
///
/// Created, advanced and told of its initial state only on its Realm's thread, queue or actor.
class ChangeObserver {
    /// The version the observer's state describes.
    var version: Int
    /// Whether the `.initial` notification is still to be delivered.
    var initialPending = true

    init(version: Int) { self.version = version }

    /// Delivers the `.initial` notification.
    func deliverInitial() {}

    /// Reads the observed state again (just before `.initial`, which describes it).
    func reloadState() {}

    /// Brings the state from `version` to the Realm's current snapshot, whose changes since
    /// are `changes`, and reports them unless `notify` is false (`write(withoutNotifying:)`).
    func advance(_ changes: ChangeSet, notify: Bool) {}
}

/// The property names a key path string names, resolved against a class: `"dog.name"`.
struct ObservedKeyPath {
    let fields: [FieldInfo]

    /// Resolves `path` from `info`; traps with Realm's message for an unknown property.
    static func resolve(_ path: String, from info: ClassInfo, core: RealmCore) -> ObservedKeyPath {
        var fields = [FieldInfo]()
        var current = info
        for name in path.split(separator: ".").map(String.init) {
            guard let field = current.field(named: name) else {
                // Realm's words (RLMClassInfo): "Invalid property name: property 'x' not found…".
                throwRealmException("Invalid property name: property '\(name)' not found in object of type "
                    + "'\(current.className)'")
            }
            fields.append(field)
            if let target = field.typeInfo.objectType {
                current = core.table(for: target, create: false)?.info ?? ClassInfo.unbound(for: target)
            }
        }
        return ObservedKeyPath(fields: fields)
    }
}
