import Dispatch
import Foundation
import Synchronization

/// Delivery of change notifications: observers are added on the Realm's thread and told
/// of new versions on it, when the Realm commits, refreshes, or (on a queue, an actor or the
/// main thread) when another Realm of the process commits.
extension RealmCore {
    /// This core's number in the file's ``ObservationHub``.
    var observationId: UInt { UInt(bitPattern: ObjectIdentifier(self).hashValue) }

    /// Adds an observer and returns its token. The `.initial` notification (for collections)
    /// follows asynchronously on a queue, an actor or the main thread, and at the next
    /// `refresh()` or commit on any other thread.
    func addObserver(_ observer: ChangeObserver) -> NotificationToken {
        let handle = ObserverHandle(observer)
        if observers.add(handle) { registerForNotifications() }
        if observer.initialPending { scheduleDelivery() }
        return NotificationToken(observer: handle, list: observers)
    }

    /// Adds the observer of a token returned before it registered (an observation on a queue:
    /// see ``observing(on:_:)``), unless the token was invalidated first. A delivery follows
    /// whether or not the observer has an `.initial`: the core may read an older version than
    /// the newest (the observation's own), and what was committed since is then its first
    /// change (no other Realm's commit told this core, which may have been opened just now).
    func addObserver(_ observer: ChangeObserver, registeringWith token: NotificationToken) {
        let registered = token.register {
            let handle = ObserverHandle(observer)
            if observers.add(handle) { registerForNotifications() }
            return (handle, observers)
        }
        if registered { scheduleDelivery() }
    }

    /// The checks every `observe` makes first.
    func verifyCanObserve() {
        verifyThread()
        if isFrozen {
            throwRealmException("Frozen Realms do not change and do not have change notifications.")
        }
        if writeTransaction != nil {
            throwRealmException("Cannot register notification blocks from within write transactions.")
        }
        beginReadIfNeeded()
    }

    /// Begins the read transaction of a core that is in none (just opened, or invalidated), as
    /// Realm does before it registers an observer (`read_group()`): an observer counts from a
    /// version, and a core in no read transaction delivers nothing.
    func beginReadIfNeeded() {
        if writeTransaction == nil, !hasReadTransaction { _ = transaction }
    }

    /// While it has observers, the core stays registered with the file's hub, which keeps it
    /// alive and pokes it when another Realm of the process commits.
    private func registerForNotifications() {
        let hub = file.observation
        let id = observationId
        observers.onEmptied.withLock { $0 = { hub.unregister(id) } }
        hub.register(id, ObservationHub.Listener(poke: makePoke()))
    }

    /// Makes a Realm confined to a queue or an actor move to the newest version whenever
    /// another Realm of the process commits, observers or not, as Realm's autorefresh does on
    /// those schedulers. Otherwise an idle one would pin its version, and LMDB cannot reuse
    /// any page freed after the oldest version a reader holds: the file would grow with every
    /// commit made elsewhere (an `asyncWrite` waiting for its turn was such a Realm). With
    /// ``Realm/autorefresh`` off it stays where it is (see `deliverAfterRefreshing`).
    ///
    /// The hub holds the core weakly here; ``unregisterAutorefresh()`` (on deallocation) ends it.
    func registerForAutorefresh() {
        guard let poke = makeAutorefreshPoke() else { return }
        file.observation.registerAutorefresh(observationId, ObservationHub.Listener(poke: poke))
        isRegisteredForAutorefresh = true
    }

    /// Called by a core being deallocated.
    func unregisterAutorefresh() {
        if isRegisteredForAutorefresh { file.observation.unregisterAutorefresh(observationId) }
    }

    /// A poke that refreshes this core on its queue or actor, holding it (and the actor) weakly;
    /// pokes arriving while one is pending are dropped. Nil for other confinements.
    ///
    /// The weak reference is made only for those confinements: a weak reference gives the core
    /// a side table for good, and every retain and release of it then takes the runtime's slow
    /// path (about 400 instructions per link hop in W2 when thread-confined cores had one too).
    private func makeAutorefreshPoke() -> (@Sendable () -> Task<Void, Never>?)? {
        switch confinement {
        case .queue(let queue):
            let reference = WeakConfinedCore(core: self)
            return {
                guard reference.claimPending() else { return nil }
                queue.async { reference.deliver() }
                return nil
            }
        case .actor(let actor):
            let reference = WeakConfinedCore(core: self)
            reference.actor = actor
            return {
                guard reference.claimPending() else { return nil }
                return Task { await reference.deliverOnActor() }
            }
        case .thread, .frozen:
            return nil
        }
    }

    private func scheduleDelivery() { _ = makePoke()() }

    /// How another thread makes this core deliver: on its queue, on its actor, on the main
    /// queue for the main thread; a core on any other thread delivers when it next refreshes
    /// or commits.
    private func makePoke() -> @Sendable () -> Task<Void, Never>? {
        let reference = ConfinedCore(core: self)
        switch confinement {
        case .queue(let queue):
            return {
                queue.async { reference.core.deliverAfterRefreshing() }
                return nil
            }
        case .actor(let actor):
            return { Task { await reference.deliver(on: actor) } }
        case .thread where Thread.isMainThread:
            return {
                DispatchQueue.main.async { reference.core.deliverAfterRefreshing() }
                return nil
            }
        case .thread, .frozen:
            return { nil }
        }
    }

    /// Moves to the newest version (unless a write is open, or ``autorefresh`` is off) and
    /// delivers notifications.
    func deliverAfterRefreshing() {
        guard !isClosed, writeTransaction == nil else { return }
        if autorefresh { advanceSnapshot() } else { announceRefreshRequired() }
        deliverNotifications()
    }

    /// With ``Realm/autorefresh`` off, a commit made elsewhere leaves this Realm where it is and
    /// tells its Realm observers `.refreshRequired`, as Realm's `changes_available` does
    /// (RLMRealmRefreshRequiredNotification); `refresh()` then moves it.
    private func announceRefreshRequired() {
        guard let snapshot = currentTransactionIfAny,
              file.environment.lastCommittedVersion > snapshot.version else { return }
        for handle in observers.current where !handle.isInvalidated {
            (handle.observer as? RealmObserver)?.refreshRequired()
        }
    }

    /// Tells every observer what changed between the version it last reported and the
    /// current snapshot (and delivers pending `.initial` notifications first).
    /// `afterOwnCommit`: the delivery that follows this Realm's own commit (see
    /// ``ChangeSet/isOwnCommit``).
    func deliverNotifications(skipping skipped: [ObserverHandle] = [], afterOwnCommit: Bool = false) {
        if isDeliveringNotifications {
            needsAnotherDelivery = true
            return
        }
        isDeliveringNotifications = true
        defer { isDeliveringNotifications = false }
        repeat {
            needsAnotherDelivery = false
            guard writeTransaction == nil, hasReadTransaction else { return }
            let txn = transaction
            let version = txn.version
            var changeSets = [Int: ChangeSet]()
            let handles = observers.current
            for handle in handles where !handle.isInvalidated {
                let observer = handle.observer
                if observer.initialPending {
                    // `.initial` describes the collection as it is now: later notifications
                    // count from here.
                    observer.initialPending = false
                    observer.reloadState()
                    observer.version = version
                    observer.deliverInitial()
                    continue
                }
                guard observer.version < version, !handle.isInvalidated else { continue }
                var changes = changeSets[observer.version] ?? changes(since: observer.version, in: txn)
                changeSets[observer.version] = changes
                changes.isOwnCommit = afterOwnCommit
                observer.version = version
                if changes.isEmpty { continue }
                observer.advance(changes, notify: !skipped.contains { $0 === handle })
            }
            // The change log keeps what this Realm's observers will still ask for.
            // (None without observers: then no observer ran to add one.)
            let oldest = handles.isEmpty
                ? nil : observers.current.filter { !$0.isInvalidated }.map(\.observer.version).min()
            file.observation.noteObserved(observationId, version: oldest)
        } while needsAnotherDelivery
    }
}

/// A core handed to code that runs it on its own queue, actor or main thread.
// @unchecked Sendable: the core is only dereferenced by the closures `makePoke` builds, each
// of which runs on the queue, actor or main thread the core is confined to.
private struct ConfinedCore: @unchecked Sendable {
    let core: RealmCore

    func deliver(on actor: isolated any Actor) {
        core.deliverAfterRefreshing()
    }
}

/// A core and its actor held weakly by the file's hub, for autorefresh (see
/// ``RealmCore/registerForAutorefresh()``).
// @unchecked Sendable: the core is only dereferenced on its own queue or actor (in `deliver`);
// `pending` is atomic, and `actor` is set before the poke is published.
private final class WeakConfinedCore: @unchecked Sendable {
    weak var core: RealmCore?
    weak var actor: (any Actor)?
    private let pending = Atomic<Bool>(false)

    init(core: RealmCore) { self.core = core }

    /// Whether this poke should schedule a refresh: none is scheduled yet.
    func claimPending() -> Bool {
        !pending.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Refreshes the core; runs on its queue or actor.
    func deliver() {
        pending.store(false, ordering: .releasing)
        core?.deliverAfterRefreshing()
    }

    func deliverOnActor() async {
        guard let actor else {
            pending.store(false, ordering: .releasing)
            return
        }
        await deliver(on: actor)
    }

    private func deliver(on actor: isolated any Actor) {
        deliver()
    }
}
