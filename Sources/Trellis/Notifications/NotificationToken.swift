import Dispatch
import Synchronization

/// Keeps a change observation alive; ``invalidate()`` (or releasing the token) stops it.
///
/// Any thread may invalidate a token; a notification already being delivered finishes, and no
/// later one is delivered. An observation on a queue registers there, after `observe` returned
/// (as in Realm): a token invalidated before that never registers.
public final class NotificationToken: Sendable {
    private enum Registration {
        /// Registering on its queue, not yet done.
        case pending
        case observing(ObserverHandle, ObserverList)
        case ended
    }
    // @unchecked Sendable: handles and lists are Sendable; the enum only pairs them.
    private struct State: @unchecked Sendable { var registration: Registration }
    private let state: Mutex<State>

    init(observer: ObserverHandle, list: ObserverList) {
        state = Mutex(State(registration: .observing(observer, list)))
    }

    /// A token whose observer registers later, on its queue (``register(_:)``).
    init(pending: ()) {
        state = Mutex(State(registration: .pending))
    }

    /// A token that observes nothing (what an observation that never started returns):
    /// ``invalidate()`` returns false.
    public convenience init() {
        let inert = ObserverHandle(ChangeObserver(version: 0))
        inert.invalidate()
        self.init(observer: inert, list: ObserverList())
    }

    /// The observer, once registered (nil while it registers on its queue, or after
    /// ``invalidate()`` stopped it before).
    var observer: ObserverHandle? {
        state.withLock { state in
            if case .observing(let handle, _) = state.registration { return handle }
            return nil
        }
    }

    /// Whether the observer is still to register on its queue.
    var isPending: Bool {
        state.withLock { state in
            if case .pending = state.registration { return true }
            return false
        }
    }

    /// Registers a pending token's observer: `add` puts it in its Realm's list, unless the token
    /// was invalidated meanwhile (then nothing is added and this returns false). Under the
    /// token's lock, so that an `invalidate()` on another thread comes before or after, whole.
    func register(_ add: () -> (ObserverHandle, ObserverList)) -> Bool {
        state.withLock { state in
            guard case .pending = state.registration else { return false }
            let (handle, list) = add()
            state.registration = .observing(handle, list)
            return true
        }
    }

    /// Stops the notifications. Returns true if the token was observing until now (or about to
    /// register on its queue), false if it was already invalidated (or never observed
    /// anything); calling it again does nothing.
    @discardableResult
    public func invalidate() -> Bool {
        state.withLock { state in
            switch state.registration {
            case .pending:
                state.registration = .ended
                return true
            case .observing(let handle, let list):
                state.registration = .ended
                let wasObserving = handle.invalidate()
                list.remove(handle)
                return wasObserving
            case .ended:
                return false
            }
        }
    }

    deinit { invalidate() }
}

/// The thread-safe part of an observer: whether it was invalidated, and the observer itself,
/// which only the Realm it belongs to ever touches (on that Realm's thread, queue or actor).
final class ObserverHandle: Sendable {
    private let invalidated = Atomic<Bool>(false)
    // @unchecked: the observer is created on its Realm's thread and only used there; other
    // threads only compare handles by identity and flip `invalidated`.
    private struct Confined: @unchecked Sendable { let observer: ChangeObserver }
    private let confined: Confined

    init(_ observer: ChangeObserver) { confined = Confined(observer: observer) }

    var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }
    /// Marks the observer invalidated; returns whether it was not already.
    @discardableResult
    func invalidate() -> Bool { !invalidated.exchange(true, ordering: .acquiringAndReleasing) }
    /// The observer: to be used only on its Realm's thread.
    var observer: ChangeObserver { confined.observer }
}

/// The observers of one Realm. Tokens remove themselves from any thread; while the list has
/// observers, the file's ``ObservationHub`` keeps the Realm open so commits reach it.
final class ObserverList: Sendable {
    private let handles = Mutex<[ObserverHandle]>([])

    var current: [ObserverHandle] { handles.withLock { $0 } }
    var isEmpty: Bool { handles.withLock { $0.isEmpty } }

    /// Adds an observer; returns whether it is the first one.
    func add(_ handle: ObserverHandle) -> Bool {
        handles.withLock { list in
            list.append(handle)
            return list.count == 1
        }
    }

    func remove(_ handle: ObserverHandle) {
        let emptied = handles.withLock { list -> Bool in
            guard let index = list.firstIndex(where: { $0 === handle }) else { return false }
            list.remove(at: index)
            return list.isEmpty
        }
        if emptied { onEmptied.withLock { $0 }?() }
    }

    /// Called (on any thread) when the last observer left.
    let onEmptied = Mutex<(@Sendable () -> Void)?>(nil)
}

/// Every Realm of one file in this process that has observers, so that a commit by any of
/// them (or a refresh that found another process's commit) reaches all the others.
final class ObservationHub: Sendable {
    /// How to make a Realm deliver its notifications, on its own thread, queue or actor. The
    /// poke returns the delivery it started as a task when it runs on an actor (nil otherwise),
    /// so that an `asyncWrite` can wait for it (see ``announceNewVersion(except:)``).
    struct Listener: Sendable {
        let poke: @Sendable () -> Task<Void, Never>?
    }
    private let listeners = Mutex<[UInt: Listener]>([:])

    func register(_ id: UInt, _ listener: Listener) {
        listeners.withLock { $0[id] = listener }
    }

    func unregister(_ id: UInt) {
        listeners.withLock { _ = $0.removeValue(forKey: id) }
        observedVersions.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// The oldest version each registered Realm's observers last saw.
    private let observedVersions = Mutex<[UInt: Int]>([:])

    /// Records the oldest version a Realm's observers last saw (nil: it has none).
    func noteObserved(_ id: UInt, version: Int?) {
        observedVersions.withLock { versions in
            // A Realm without observers notes nil after every commit: nothing to hash when no
            // Realm of the file noted a version.
            if version == nil, versions.isEmpty { return }
            versions[id] = version
        }
    }

    /// The oldest version an observer of this process will still compute changes from: the
    /// change log keeps the records after it (see ``RealmCore/persistChangeRecord(_:)``).
    var oldestObservedVersion: Int? { observedVersions.withLock { $0.values.min() } }

    /// How many Realms of the file are registered (have observers).
    var registeredCount: Int { listeners.withLock { $0.count } }

    /// Realms that follow the others' commits without observers (confined to a queue or an
    /// actor: Realm's autorefresh), held weakly by their listeners.
    private let autorefreshers = Mutex<[UInt: Listener]>([:])

    func registerAutorefresh(_ id: UInt, _ listener: Listener) {
        autorefreshers.withLock { $0[id] = listener }
    }

    func unregisterAutorefresh(_ id: UInt) {
        autorefreshers.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// How many Realms of the file follow the others' commits by autorefresh.
    var autorefreshCount: Int { autorefreshers.withLock { $0.count } }

    /// Tells every registered Realm except `origin` that a newer version exists; returns the
    /// deliveries this started on actors, Realms with observers first.
    @discardableResult
    func announceNewVersion(except origin: UInt?) -> [Task<Void, Never>] {
        let targets = listeners.withLock { $0.isEmpty ? [:] : $0.filter { $0.key != origin } }
        // A Realm with observers is refreshed by its observers' listener already.
        let refreshed = autorefreshers.withLock {
            $0.isEmpty ? [:] : $0.filter { $0.key != origin && targets[$0.key] == nil }
        }
        if targets.isEmpty, refreshed.isEmpty { return [] }
        var deliveries = [Task<Void, Never>]()
        for listener in targets.values { if let delivery = listener.poke() { deliveries.append(delivery) } }
        for listener in refreshed.values { _ = listener.poke() }
        return deliveries
    }
}
