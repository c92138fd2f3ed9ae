import Dispatch

/// `observe(on: actor)`: notifications delivered inside an actor, with values from a Realm
/// confined to that actor. Every form hands the observed value to the actor through one
/// ``ActorObservation`` and observes it there as on the actor's own thread.

// MARK: - Collections

extension RealmCollection {
    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with the
    /// collection read from the actor's Realm (the one `Realm(configuration:actor:)` opens for
    /// it): first `.initial`, then an `.update` after every commit that changed the collection.
    ///
    /// If the calling task is cancelled before the observation is registered, nothing is
    /// observed and the returned token's `invalidate()` returns false, as in Realm.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void)
        async -> NotificationToken
    {
        let observation = ActorObservation(of: self)
        return await observation.register(on: actor, block) { (collection: Self, deliver) in
            collection.observe(keyPaths: keyPaths, on: nil as DispatchQueue?, deliver)
        }
    }
}

extension RealmCollection where Element: ObjectBase {
    /// The actor form with typed key paths: `observe(keyPaths: [\Dog.name], on: actor)`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void)
        async -> NotificationToken
    {
        await observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: actor, block)
    }
}

extension Map where Key == String {
    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with the map
    /// read from the actor's Realm. `keyPaths` name properties of the map's objects, not keys.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Map>) -> Void)
        async -> NotificationToken
    {
        let observation = ActorObservation(of: self)
        return await observation.register(on: actor, block) { (map: Map, deliver) in
            map.observe(keyPaths: keyPaths, on: nil as DispatchQueue?, deliver)
        }
    }

    /// The actor form with typed key paths of the map's objects.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Value.Wrapped>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, RealmMapChange<Map>) -> Void)
        async -> NotificationToken where Value: OptionalProtocol, Value.Wrapped: ObjectBase
    {
        await observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: actor, block)
    }
}

// MARK: - Objects

extension _ObjectObservable {
    /// Like ``observe(keyPaths:on:_:)``, but `block` runs isolated to `actor`, with the object
    /// read from the actor's Realm.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void)
        async -> NotificationToken
    {
        let observation = ActorObservation(
            of: self, unmanaged: "Only objects which are managed by a Realm support change notifications",
            returnsAfterFirstDelivery: true)
        return await observation.register(on: actor, block) { (object: Self, deliver) in
            object.observe(keyPaths: keyPaths, on: nil as DispatchQueue?, deliver)
        }
    }

    /// The actor form with typed key paths: `dog.observe(keyPaths: [\Dog.name], on: actor)`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Self>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void)
        async -> NotificationToken
    {
        await observe(keyPaths: keyPaths.map(QueryKeyPathNames.name), on: actor, block)
    }
}

// MARK: - Handing the value to the actor

/// What an observation needs to be set up in an actor: the observed value handed over as a
/// ``ThreadSafeReference`` hands it (realm-swift's `with(_:on:)` makes one), and the file.
/// Made (and checked) in the caller's isolation, used in the actor's.
// @unchecked Sendable: the reference's resolver captures only immutable descriptions (table,
// key, query steps), never a Realm or an accessor (see ThreadSafeReference).
struct ActorObservation<Value: ThreadConfined>: @unchecked Sendable {
    private let reference: ReferencePayload
    private let configuration: Realm.Configuration
    /// Whether `register` returns only after the observer's first delivery (an object's).
    private let returnsAfterFirstDelivery: Bool

    /// Checks that `value` can be observed (managed, not frozen, not in a write transaction,
    /// not deleted) and takes a reference to it at the caller's version; traps with `unmanaged`
    /// for an unmanaged one.
    init(of value: Value, unmanaged: String = "Change notifications are only supported on managed collections.",
         returnsAfterFirstDelivery: Bool = false)
    {
        guard let realm = value.realm else { throwRealmException(unmanaged) }
        realm.core.verifyCanObserve()
        if value.isInvalidated { throwRealmException("Object has been deleted or invalidated.") }
        reference = ReferencePayload(resolver: value._trellisResolver(), source: realm.core)
        configuration = realm.core.configuration
        self.returnsAfterFirstDelivery = returnsAfterFirstDelivery
    }

    /// Opens the actor's Realm, finds the value there and observes it with `observe`, whose
    /// changes reach `block` isolated to the actor. Nothing is observed (and an inert token
    /// returned) when the task was cancelled or the value is gone by then, as in Realm.
    ///
    /// The actor's Realm resolves the reference as realm-swift's does: one older than the
    /// caller's version moves to it, one in no read transaction yet begins it there. So what
    /// was committed after `observe` was called is a change the observer reports (for a
    /// collection, part of its `.initial`, computed at the newest version). An object's
    /// observation returns once that first delivery ran, as realm-swift's waits for its
    /// token's `registrationComplete`.
    func register<A: Actor, Change>(on actor: isolated A, _ block: @Sendable @escaping (isolated A, Change) -> Void,
                                    _ observe: (Value, @escaping (Change) -> Void) -> NotificationToken)
        -> NotificationToken
    {
        if Task.isCancelled { return NotificationToken() }
        let target: RealmCore
        do {
            target = try RealmOpener.open(configuration, confinement: .actor(actor))
        } catch {
            throwRealmException("Could not open '\(configuration.path)' for the actor: \(error)")
        }
        guard let value = reference.resolve(in: target) as? Value else { return NotificationToken() }
        let token = observe(value) { change in
            let handed = HandedToActor(value: change)
            actor.assumeIsolated { block($0, handed.value) }
        }
        // The first delivery: what was committed since the caller's version.
        if returnsAfterFirstDelivery { target.deliverAfterRefreshing() }
        return token
    }
}

/// A change handed to the block of an actor observation.
// @unchecked Sendable: the change holds values of the actor's own Realm, it is made while
// the actor's executor runs this code, and the block runs isolated to that same actor, the
// only place those values are used.
private struct HandedToActor<Value>: @unchecked Sendable {
    let value: Value
}
