import Dispatch

/// `observe` on objects, typed with the object's own class.
public protocol _ObjectObservable: ObjectBase {}
extension ObjectBase: _ObjectObservable {}

extension _ObjectObservable {
    /// Calls `block` after every commit that changed the object's properties (each with its
    /// old and new value), and once with `.deleted` when it is deleted.
    ///
    /// `keyPaths` limits the properties observed; a key path through a link or backlink
    /// (`"dog.name"`, `"owners.name"`) observes the linked objects' property too. Without
    /// key paths, only the object's own properties count (a list property changes when its
    /// elements are added, removed or replaced).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken
    {
        guard let managed = _managed else {
            throwRealmException("Only objects which are managed by a Realm support change notifications")
        }
        managed.core.verifyCanObserve()
        if !managed.core.objectExists(managed) { throwRealmException("Object has been deleted or invalidated.") }
        let paths = keyPaths.map { $0.map { ObservedKeyPath.resolve($0, from: managed.info, core: managed.core) } }
        // As Realm's ObjectChangeCallbackWrapper, which keeps the observed RLMObjectBase: on its
        // own Realm the block gets the observed accessor itself (a collection property it reads
        // is the one the change reports); another Realm (a queue's) gets an accessor of the
        // object's class, which `Self`, the static type (`Object` for an object typed so), need
        // not be.
        let observed = self
        let objectType = type(of: self)
        return managed.core.observing(on: queue) { target in
            let object = target === managed.core
                ? observed : target.accessor(objectType, table: managed.table, key: managed.key)
            guard let targetManaged = object._managed else { return RealmObserver(core: target, block: { _, _ in }) }
            return ObjectObserver(object: object, managed: targetManaged, paths: paths, block: block)
        }
    }

    /// Realm's generic form (`observe<T: RLMObjectBase>`): the block's own `ObjectChange` type
    /// says how the object is handed over, so one block typed
    /// `(ObjectChange<ObjectBase>) -> Void` can observe objects of any model class. A block
    /// whose type the object is not (`ObjectChange<Dog>` on a `Person`) is a programmer error
    /// and traps when the first change arrives.
    @_disfavoredOverload
    public func observe<T: ObjectBase>(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                                       _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths, on: queue) { (change: ObjectChange<Self>) in
            switch change {
            case .change(let object, let properties):
                guard let object = object as? T else {
                    throwRealmException("observe: the block takes ObjectChange<\(T.self)>, but the observed object is a '\(type(of: object))'")
                }
                block(.change(object, properties))
            case .deleted:
                block(.deleted)
            case .error(let error):
                block(.error(error))
            }
        }
    }

    /// `observe` with typed key paths: `dog.observe(keyPaths: [\Dog.name])`.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken
    {
        observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: queue, block)
    }
}
