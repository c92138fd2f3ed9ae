/// `observe(on: actor)`: notifications delivered inside an actor, with values from a Realm
/// confined to that actor.
extension Results {
    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with results of
    /// the actor's Realm (the one `Realm(configuration:actor:)` opens for it).
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Results>) -> Void)
        async -> NotificationToken
    {
        core.verifyCanObserve()
        let description = ObservedDescription(resolver: _trellisResolver(), configuration: core.configuration,
                                              keyPaths: keyPaths)
        return await description.register(on: actor) { target, resolved in
            guard let results = resolved as? Results else { return nil }
            return CollectionObserver(core: target, collection: results, source: results.observationSource(keyPaths)) {
                change in
                let handed = HandedToActor(value: change)
                actor.assumeIsolated { block($0, handed.value) }
            }
        }
    }
}

extension _ObjectObservable {
    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with the object
    /// read from the actor's Realm.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void)
        async -> NotificationToken
    {
        guard let managed = _managed else {
            throwRealmException("Only objects which are managed by a Realm support change notifications")
        }
        managed.core.verifyCanObserve()
        let description = ObservedDescription(resolver: _trellisResolver(), configuration: managed.core.configuration,
                                              keyPaths: keyPaths)
        return await description.register(on: actor) { target, resolved in
            guard let object = resolved as? Self, let objectManaged = object._managed else { return nil }
            let paths = keyPaths.map { $0.map { ObservedKeyPath.resolve($0, from: objectManaged.info, core: target) } }
            return ObjectObserver(object: object, managed: objectManaged, paths: paths) { change in
                let handed = HandedToActor(value: change)
                actor.assumeIsolated { block($0, handed.value) }
            }
        }
    }
}

/// What an observation needs to be set up in another isolation: how to find the observed
/// value again, and the file.
// @unchecked Sendable: the resolver captures only immutable descriptions (table, key, query
// steps), never a Realm or an accessor (see ThreadSafeReference).
private struct ObservedDescription: @unchecked Sendable {
    let resolver: _ThreadSafeResolver
    let configuration: Realm.Configuration
    let keyPaths: [String]?

    /// Opens the actor's Realm, finds the value there and registers the observer `make` builds.
    func register<A: Actor>(on actor: isolated A, _ make: (RealmCore, Any?) -> ChangeObserver?) -> NotificationToken {
        let target: RealmCore
        do {
            target = try RealmOpener.open(configuration, confinement: .actor(actor))
        } catch {
            throwRealmException("Could not open '\(configuration.path)' for the actor: \(error)")
        }
        guard let observer = make(target, resolver.resolve(target)) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        return target.addObserver(observer)
    }
}

/// A change handed to the block of an actor observation.
// @unchecked Sendable: the change holds values of the actor's own Realm, it is made while
// the actor's executor runs this code, and the block runs isolated to that same actor, the
// only place those values are used.
private struct HandedToActor<Value>: @unchecked Sendable {
    let value: Value
}
