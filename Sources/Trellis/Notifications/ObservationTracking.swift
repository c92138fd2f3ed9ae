import CTrellisObservation
import Observation
import Synchronization

// Swift Observation (beyond Realm, issue 40): managed objects and collections take part in
// `withObservationTracking`. A read inside the tracking closure registers what it read with an
// `ObservationRegistrar`; a commit that changes it (this Realm's, or another thread's or
// process's seen by a refresh) calls `onChange` once. Unmanaged objects behave like
// `@Observable` classes. A read outside a tracking closure pays a thread-local load and a test
// (``ObservationGate``).

extension ObjectBase: Observable {}

/// Whether this thread may be inside a tracking closure: a few instructions (see
/// `CTrellisObservation.h`).
@usableFromInline
enum ObservationGate {
    @inlinable @inline(__always)
    static var mayTrack: Bool { trellis_observation_may_track() }

    /// Whether the check reads the Observation runtime's own per-thread pointer (else Trellis
    /// objects take no part in tracking on this platform).
    static var isExact: Bool { trellis_observation_fast_check_is_exact() }

    /// This thread's slot if it was resolved on this thread, else nil: one thread-local load.
    /// A resolved slot is no other living thread's, so it equals a core's
    /// ``RealmCore/ownerObservationSlot`` only on the thread that opened the core.
    @inlinable @inline(__always)
    static var resolvedSlot: UnsafePointer<UnsafeMutableRawPointer?>? { trellis_observation_resolved_slot() }

    /// This thread's slot: non-null inside a tracking closure on this thread (a `RealmCore`
    /// keeps its owner thread's, see ``RealmCore/ownerObservationSlot``).
    static var currentThreadSlot: UnsafePointer<UnsafeMutableRawPointer?> { trellis_observation_current_slot() }
}

/// Called once per process by the C side: whether the slot it found reads non-null inside a
/// tracking closure and null outside.
@_cdecl("trellis_observation_check_slot")
func observationCheckSlot() -> Bool {
    let outside = trellis_observation_may_track()
    var inside = false
    withObservationTracking { inside = trellis_observation_may_track() } onChange: {}
    return inside && !outside
}

/// What a tracking closure registers with: one per observed object, collection or results.
/// Its key paths name the property (`[field: n]`) or the contents (`[field: -1]`).
@usableFromInline
final class ObservationSubject: Observable, @unchecked Sendable {
    let registrar = ObservationRegistrar()

    /// A key path per property; only its identity matters to the registrar.
    subscript(field field: Int) -> Int { field }

    nonisolated(unsafe) static let contents: KeyPath<ObservationSubject, Int> = \ObservationSubject[field: -1]

    /// Key paths made once per field number (reads inside tracking closures only).
    private static let fieldKeyPaths = Mutex<[KeyPath<ObservationSubject, Int>]>([])

    static func keyPath(field: Int) -> KeyPath<ObservationSubject, Int> {
        if field < 0 { return contents }
        return fieldKeyPaths.withLock { paths in
            while paths.count <= field { paths.append(\ObservationSubject[field: paths.count]) }
            return paths[field]
        }
    }

    func access(field: Int) { registrar.access(self, keyPath: Self.keyPath(field: field)) }

    func notifyChange(field: Int) {
        let path = Self.keyPath(field: field)
        registrar.willSet(self, keyPath: path)
        registrar.didSet(self, keyPath: path)
    }
}

// MARK: - Unmanaged objects

extension ObjectBase {
    /// A read of an unmanaged object's property inside a tracking closure: the object learns its
    /// fields (as a query prototype does) and registers this one.
    @usableFromInline @inline(never)
    final func _observeUnmanagedRead(fieldIndex: Int) {
        let subject: ObservationSubject
        if let existing = _observation {
            subject = existing
        } else {
            subject = ObservationSubject()
            _observation = subject
        }
        subject.access(field: fieldIndex)
    }

    /// Binds the fields of an unmanaged object read inside a tracking closure, so that its
    /// wrappers know their field (see ``Persisted/_field``); returns whether they do.
    @usableFromInline @inline(never)
    final func _bindFieldsForObservation() -> Bool {
        guard _managed == nil, _keyPathRecorder == nil, type(of: self) != DynamicObject.self else { return false }
        _bindSlots(ClassInfo.unbound(for: type(of: self)), columns: false)
        return true
    }

    /// Before a store to a property of an unmanaged object a tracking closure read.
    @usableFromInline @inline(never)
    final func _willSetUnmanaged(fieldIndex: Int) {
        guard let subject = _observation, fieldIndex >= 0 else { return }
        subject.registrar.willSet(subject, keyPath: ObservationSubject.keyPath(field: fieldIndex))
    }

    /// After that store.
    @usableFromInline @inline(never)
    final func _didSetUnmanaged(fieldIndex: Int) {
        guard let subject = _observation, fieldIndex >= 0 else { return }
        subject.registrar.didSet(subject, keyPath: ObservationSubject.keyPath(field: fieldIndex))
    }
}

// MARK: - Managed objects and collections

extension ObjectBase {
    /// A read of column `column` of a managed object inside a tracking closure.
    @usableFromInline @inline(never)
    final func _observeManagedRead(_ column: Int) {
        guard let managed = _managed, !managed.core.isFrozen else { return }
        managed.core.observationTracker.access(table: managed.table, key: managed.key, column: column)
    }
}

extension RealmCore {
    /// This core's registrations of tracking closures, made on first use.
    var observationTracker: ObservationTracker {
        if let tracker = trackedObservations { return tracker }
        let tracker = ObservationTracker(core: self)
        trackedObservations = tracker
        return tracker
    }

    /// Registers a collection read inside a tracking closure.
    func observeCollectionRead(_ target: ObservationTracker.Target) {
        guard !isFrozen else { return }
        observationTracker.access(target)
    }
}

/// The rows, collections and results tracking closures read in one Realm (core), and the
/// subjects their registrars live in. A change observer of the core while it holds any: each
/// commit or refresh tells it what changed, and it notifies (then forgets) what did.
final class ObservationTracker: ChangeObserver {
    /// Something a tracking closure read.
    enum Target: Hashable {
        /// A stored property (column) of one object.
        case row(table: UInt32, key: ObjectKey)
        /// A `List`, `MutableSet` or `Map` property: its owner's column.
        case collection(table: UInt32, key: ObjectKey, column: Int)
        /// The objects of a class (results over it, filtered or not, sorted or not).
        case table(UInt32)
        /// Everything (results whose query may follow links anywhere).
        case everything
    }

    private struct Registration {
        let subject = ObservationSubject()
        /// For rows: the columns read.
        var columns = Set<Int>()
    }

    private unowned let core: RealmCore
    private var registrations: [Target: Registration] = [:]
    private var token: NotificationToken?

    init(core: RealmCore) {
        self.core = core
        super.init(version: 0)
        initialPending = false
    }

    /// How many rows, collections and results are registered (for tests).
    var registrationCount: Int { registrations.count }

    func access(table: Table, key: ObjectKey, column: Int) {
        let target = Target.row(table: table.tableId, key: key)
        startObserving()
        registrations[target, default: Registration()].columns.insert(column)
        registrations[target]?.subject.access(field: column)
    }

    func access(_ target: Target) {
        startObserving()
        if registrations[target] == nil { registrations[target] = Registration() }
        registrations[target]?.subject.access(field: -1)
    }

    /// Joins the core's observers (from the current snapshot) while something is registered.
    private func startObserving() {
        guard token == nil, !core.isClosed else { return }
        version = core.transaction.version
        token = core.addObserver(self)
    }

    override func advance(_ changes: ChangeSet, notify: Bool) {
        guard !changes.isEmpty else { return }
        var fired = [(ObservationSubject, [Int])]()
        for (target, registration) in registrations {
            let columns = changedFields(target, registration, changes)
            if !columns.isEmpty {
                fired.append((registration.subject, columns))
                // Only the closures that read a changed field are told (and end); another
                // closure that read another field of the same row stays registered.
                let remaining = registration.columns.subtracting(columns)
                if remaining.isEmpty {
                    registrations[target] = nil
                } else {
                    registrations[target]?.columns = remaining
                }
            }
        }
        if registrations.isEmpty {
            token?.invalidate()
            token = nil
        }
        // After the bookkeeping: `onChange` may read (and register) again.
        for (subject, columns) in fired {
            for column in columns { subject.notifyChange(field: column) }
        }
    }

    /// The registered fields of `target` that `changes` changed (-1: the contents).
    private func changedFields(_ target: Target, _ registration: Registration, _ changes: ChangeSet) -> [Int] {
        switch target {
        case .row(let table, let key):
            if !changes.isComplete { return Array(registration.columns) }
            guard let tableChanges = changes.tables[table] else { return [] }
            if tableChanges.deletions.contains(key) { return Array(registration.columns) }
            guard let modified = tableChanges.modifications[key] else { return [] }
            return registration.columns.filter { modified.contains($0) }
        case .collection(let table, let key, let column):
            if !changes.isComplete { return [-1] }
            guard let tableChanges = changes.tables[table] else { return [] }
            let changed = tableChanges.deletions.contains(key) || tableChanges.modifications[key]?.contains(column) == true
            return changed ? [-1] : []
        case .table(let table):
            if !changes.isComplete { return [-1] }
            return changes.tables[table].map { $0.isEmpty ? [] : [-1] } ?? []
        case .everything:
            return [-1]
        }
    }
}

// MARK: - Results and linking objects

extension Results {
    /// Registers these results with a tracking closure: a commit that can change their objects
    /// (their class's objects, or anything when a step follows links) calls `onChange`.
    @inline(never)
    func observeRead() {
        guard !core.isFrozen else { return }
        switch source {
        case .table, .dynamicTable:
            guard let table else { return core.observeCollectionRead(.everything) }
            core.observeCollectionRead(.table(table.tableId))
        case .collection(let location), .values(let location):
            core.observeCollectionRead(.collection(table: location.table.tableId, key: location.key,
                                                   column: location.field.rowColumn))
            if !steps.isEmpty, let table { core.observeCollectionRead(.table(table.tableId)) }
        case .linkingObjects(let target, let key, let originProperty):
            guard let origin = table, let field = origin.info.field(named: originProperty) else {
                return core.observeCollectionRead(.everything)
            }
            let column = ChangeSet.backlinkColumn(originTable: origin.tableId, originColumn: field.rowColumn)
            core.observeCollectionRead(.collection(table: target.tableId, key: key, column: column))
            if !steps.isEmpty { core.observeCollectionRead(.table(origin.tableId)) }
        case .nestedValues:
            core.observeCollectionRead(.everything)
        }
        // A filter, sort or distinct that reads beyond the objects' own columns.
        if !steps.isEmpty, !isValues, ResultsDependencies(steps: steps, info: objectInfo).rootColumns == nil {
            core.observeCollectionRead(.everything)
        }
    }
}

extension LinkingObjectsSource {
    /// Registers the links to the target through the origin property with a tracking closure.
    @inline(never)
    func observeRead(originType: ObjectBase.Type) {
        guard !core.isFrozen else { return }
        guard let origin = core.backlinkOrigin(field, originType: originType, originProperty: originProperty) else {
            return core.observeCollectionRead(.everything)
        }
        let column = ChangeSet.backlinkColumn(originTable: origin.table.tableId, originColumn: origin.column)
        core.observeCollectionRead(.collection(table: target.tableId, key: key, column: column))
    }
}
