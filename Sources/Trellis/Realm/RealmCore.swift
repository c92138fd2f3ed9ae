import Foundation
import Synchronization

/// A unique number for every state change of every Realm in the process; accessors cache a
/// row pointer together with the stamp it was read under.
private let stampCounter = Atomic<UInt64>(1)
func nextChangeStamp() -> UInt64 { stampCounter.wrappingAdd(1, ordering: .relaxed).newValue }

/// The state behind one `Realm` value: its pinned snapshot or its write transaction, the
/// thread it belongs to, and the tables it has bound.
///
/// Confined to the thread that opened it; every entry point checks.
@usableFromInline
final class RealmCore {
    let configuration: Realm.Configuration
    let file: FileState
    let environmentPath: String
    @usableFromInline let ownerThread: pthread_t
    /// The owner thread's Swift Observation slot (see ``ObservationGate``): the row reader's fast
    /// path compares this thread's slot with it (the thread test) and then tests the word it
    /// points at (whether a tracking closure runs), one thread-local load for both.
    @usableFromInline let ownerObservationSlot: UnsafePointer<UnsafeMutableRawPointer?>
    /// What the core is confined to; the thread that opened it unless said otherwise.
    let confinement: Confinement
    /// The entry of this core in the per-thread instance registry, if it has one.
    var instanceKey: RealmOpener.InstanceKey?

    // The state below is confined to the owner thread (checked on every entry point), so
    // dynamic exclusivity checks on it are skipped: they cost more than a property read.
    @exclusivity(unchecked) private var readTransaction: Transaction?
    /// The write transaction, else the snapshot when one is pinned; nil otherwise (begins none).
    var currentTransactionIfAny: Transaction? {
        if let writeTransaction { return writeTransaction }
        guard let readTransaction, readTransaction.isActive, !readTransaction.isSuspended else { return nil }
        return readTransaction
    }
    @exclusivity(unchecked) private(set) var writeTransaction: Transaction? {
        didSet {
            if oldValue == nil, writeTransaction != nil {
                OpenWhileWriting.writeBegan(self)
            } else if oldValue != nil, writeTransaction == nil {
                OpenWhileWriting.writeEnded(self)
            }
        }
    }
    /// The core itself while a core confined to a queue or an actor is in a write transaction
    /// (see ``OpenWhileWriting``).
    var keptOpenByItsWrite: RealmCore?
    /// Changes whenever what a read would see may have changed.
    @usableFromInline @exclusivity(unchecked) private(set) var changeStamp: UInt64 = nextChangeStamp()
    /// Whether an accessor held by an iteration has no other reference: then nobody can see it
    /// pointed at another row (see ``accessor(reusing:_:table:key:)``).
    @exclusivity(unchecked) var soleReference = SoleReference()
    /// The spares the `Realm` values of this core share (see ``RealmSpares``), which clear this
    /// when they go. Not a strong reference: the values keep them, and they keep the core.
    @exclusivity(unchecked) unowned(unsafe) var spares: RealmSpares?
    /// Bumped by `invalidate()`: accessors from an earlier epoch are invalidated.
    @exclusivity(unchecked) private(set) var epoch: UInt64 = 0
    /// Set once `invalidate()` closed this frozen core (see ``closeFrozen()``); read from any
    /// thread, so atomic (a relaxed load is a plain load).
    private let closed = Atomic<Bool>(false)
    var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// The update policy for objects linked by a property assignment (`.error` except while
    /// `create(_:value:update:)` updates an existing object).
    var propertyUpdatePolicy = Realm.UpdatePolicy.error

    /// Tables created in the current write transaction, published when it commits.
    @exclusivity(unchecked) var pendingTables: [ObjectIdentifier: Table] = [:]
    /// The last two tables ``table(for:create:)`` found (RealmCore+Tables.swift).
    @exclusivity(unchecked) var cachedTables: (CachedTable?, CachedTable?) = (nil, nil)
    /// The last answer of ``backlinkOrigin(_:originType:originProperty:)``.
    @exclusivity(unchecked) var cachedBacklinkOrigin: CachedBacklinkOrigin?
    /// The tables a rolled-back write made for a class it added (kept alive by the file, as
    /// every table of a rolled-back write is: accessors reference their tables unowned). Their
    /// objects stay invalidated even when a later write makes the class's table again (in
    /// realm-core, they reference a table accessor the rollback detached).
    @exclusivity(unchecked) private var rolledBackTables: Set<ObjectIdentifier> = []
    @exclusivity(unchecked) var pendingCatalog: SchemaCatalog?
    /// The catalog this core last checked its tables' indexes against (RealmCore+StoredIndexes.swift).
    @exclusivity(unchecked) var storedIndexCheck = StoredIndexCheck()
    /// The tables this core handed out and the snapshot their layout was last checked in
    /// (RealmCore+StoredLayouts.swift).
    @exclusivity(unchecked) var storedLayoutCheck = StoredLayoutCheck()
    /// The classes of the file's stored schema, while an import without model classes writes
    /// through them (links and backlinks then find their tables by class name).
    var storedSchema: StoredSchemaClasses?
    /// The classes as ``DynamicObject``s see them, made on first dynamic use (see `dynamicSchema`).
    @exclusivity(unchecked) var dynamicClasses: DynamicSchema?
    /// What `withObservationTracking` closures read in this Realm (see ``ObservationTracker``).
    var trackedObservations: ObservationTracker?
    /// The next object key of each table written in this write transaction (see
    /// RealmCore+ObjectKeys.swift); stored in the file when the transaction commits.
    @exclusivity(unchecked) var keyCounters = TableIdMap<ObjectKey>()
    /// The counters this core's last commit stored, and its version (see
    /// ``noteCommittedKeyCounters(_:)``).
    @exclusivity(unchecked) var committedKeyCounters = (version: -1, counters: TableIdMap<ObjectKey>())
    /// The change log's header as this write stored it (``persistChangeRecord(_:)``), and as
    /// this core's last commit stored it with that commit's version (``noteOwnCommit(_:changedSchema:)``).
    @exclusivity(unchecked) var pendingLogHeader: ChangeLogHeader?
    @exclusivity(unchecked) var committedLogHeader: (version: Int, header: ChangeLogHeader)?
    /// Whether reads have moved off a write transaction that ran out of space.
    @exclusivity(unchecked) private var noticedWriteFailure = false
    /// What the current write transaction changed so far (see ``ChangeRecorder``).
    @exclusivity(unchecked) var recordedChanges = ChangeRecorder()
    /// The rows this write transaction changed, for the column copies (see ``ColumnLog``).
    let columnLog = ColumnLog()
    /// The backlink count changes of the write transaction (see ``BacklinkCountLog``).
    @exclusivity(unchecked) var backlinkCountLog = BacklinkCountLog()
    /// Where ``writeRow(_:key:values:isNew:)`` encodes each row before it is put.
    let rowScratch = ByteBuffer()
    /// Whether the file stores backlink counts (see ``FileState/backlinkCounts``).
    let storesBacklinkCounts: Bool
    /// See ``storedBacklinkCount(to:key:from:column:)``.
    @exclusivity(unchecked) var cachedCountBlock: CachedCountBlock?
    /// Whether queries, aggregates and sorts read the column copies (the tests turn it off to
    /// compare the answers with the rows').
    var readsColumnCopies = true
    /// Whether link counts read the stored counts (the tests turn it off to compare them with
    /// the sums of the backlinks).
    var readsStoredBacklinkCounts = true
    /// Set while TrellisSync applies downloaded changes: the commit is not queued for upload.
    var isApplyingSyncDownload = false
    /// Set while TrellisSync writes a document (a download, a client reset's recovery): the sets,
    /// maps and lists it gives replace the object's whole, where an app's `update: .modified` sets
    /// them by difference (``AddSession/diffsCollections``).
    var assignsCollectionsWhole = false
    /// The last commit queued changes for upload (the sync hook is told after it commits).
    var committedSyncChanges = false
    /// The collections of links the app emptied in this write transaction (``noteSyncClear(_:)``).
    @exclusivity(unchecked) var syncClearedCollections = Set<SyncClearedCollection>()
    /// The observers of this Realm and the version they were last told about.
    let observers = ObserverList()
    /// The asynchronous writes of this Realm (``Realm/beginAsyncWrite(_:)``).
    let asyncWrites = AsyncWriteQueue()

    /// Whether the core was opened on the main thread.
    private let openedOnMainThread = Thread.isMainThread

    /// Whether the core belongs to the main thread (asynchronous writes then run on its later
    /// turns: see `MainThreadTurn`).
    var confinementIsMainThread: Bool {
        if case .thread = confinement { return openedOnMainThread }
        return false
    }
    /// Whether notifications are being delivered (a block that writes asks for another round).
    var isDeliveringNotifications = false
    /// Whether a Realm confined to a queue or an actor (or the main thread) moves to another
    /// Realm's commit by itself (``Realm/autorefresh``).
    var autorefresh = true
    var needsAnotherDelivery = false

    /// A core pinning `snapshot` (none: the first read begins one), confined as said.
    private init(configuration: Realm.Configuration, file: FileState, confinement: Confinement,
                 snapshot: Transaction?)
    {
        self.configuration = configuration
        self.file = file
        self.storesBacklinkCounts = file.backlinkCounts != nil
        self.environmentPath = file.environment.path
        self.ownerThread = pthread_self()
        self.ownerObservationSlot = ObservationGate.currentThreadSlot
        self.confinement = confinement
        readTransaction = snapshot
        if let snapshot {
            StorageLog.readStarted(file: file.logId, version: snapshot.version, frozen: confinement.isFrozen)
        }
    }

    /// A live core, not yet in a read transaction: as in Realm, its first read begins one at
    /// the newest version then (see ``transaction``), and a ``ThreadSafeReference`` resolved
    /// first begins it at the reference's version. The file is read once here, so that a file
    /// that cannot be read fails the open.
    convenience init(configuration: Realm.Configuration, file: FileState, confinement: Confinement = .thread) throws {
        do {
            // Realm's open reads the schema in a read transaction of its own and ends it before
            // handing the Realm out; realm-core logs it, and Realm's LoggerTests look for a
            // trace line after an open with no read.
            let check = try file.environment.beginRead()
            StorageLog.readStarted(file: file.logId, version: check.version)
            check.abort()
        } catch {
            throw RealmErrors.opening(file.environment.path, error)
        }
        self.init(configuration: configuration, file: file, confinement: confinement, snapshot: nil)
    }

    /// A frozen core reading `snapshot` (already begun, at the wanted version).
    convenience init(frozenFrom configuration: Realm.Configuration, file: FileState, snapshot: Transaction) {
        snapshot.shareBetweenThreads()
        self.init(configuration: configuration, file: file, confinement: .frozen, snapshot: snapshot)
    }

    /// Pins `snapshot` and hands over the one pinned so far (to a frozen core), if any.
    func exchangeSnapshot(for snapshot: Transaction) -> Transaction? {
        guard let current = readTransaction, current.isActive, !current.isSuspended else { return nil }
        readTransaction = snapshot
        noteChange()
        verifyStoredLayouts(snapshot)
        return current
    }

    /// Whether the file's hub refreshes this core when another Realm commits (a core confined
    /// to a queue or an actor; see ``registerForAutorefresh()``).
    var isRegisteredForAutorefresh = false

    deinit {
        if let instanceKey { RealmOpener.forget(self, key: instanceKey) }
        unregisterAutorefresh()
    }

    // MARK: - Confinement and state

    /// Whether the caller runs on the thread that opened this core (the common case; a core
    /// confined to a queue or an actor, or frozen, may also be used elsewhere).
    @inlinable @inline(__always)
    var isOwnerThread: Bool { pthread_equal(ownerThread, pthread_self()) != 0 }

    @inline(__always)
    func verifyThread() {
        if pthread_equal(ownerThread, pthread_self()) == 0 { verifyConfinement() }
    }

    /// The check for a core used off the thread that opened it: fine on its queue or actor,
    /// and anywhere when frozen.
    private func verifyConfinement() {
        switch confinement {
        case .thread:
            throwRealmException("Realm accessed from incorrect thread.")
        case .queue(let queue):
            if !queue.isCurrent {
                throwRealmException("Realm accessed from incorrect thread: it is confined to the dispatch queue "
                    + "'\(queue.label)'.")
            }
        case .actor(let actor):
            actor.preconditionIsolated("Realm accessed from incorrect thread: it is confined to an actor.")
        case .frozen:
            return
        }
    }

    var isFrozen: Bool { confinement.isFrozen }

    var isInWriteTransaction: Bool { writeTransaction != nil }
    /// Whether the core is in a read transaction: not before its first read, nor after
    /// `invalidate()` (realm-core's `is_in_read_transaction`).
    var hasReadTransaction: Bool { readTransaction != nil }

    /// Begins the read transaction of a core that is in none on `snapshot` (an older version
    /// than the newest, as a ``ThreadSafeReference`` resolved first asks).
    func beginRead(on snapshot: Transaction) {
        precondition(readTransaction == nil && writeTransaction == nil,
                     "Trellis internal error: a read transaction began on a Realm already in one.")
        readTransaction = snapshot
        noteChange()
        StorageLog.readStarted(file: file.logId, version: snapshot.version)
        verifyStoredLayouts(snapshot)
    }

    /// The transaction reads use: the write transaction if one is open, else the snapshot.
    /// The common case, a live snapshot and no write, is inlined into every read.
    var transaction: Transaction {
        @inline(__always) get {
            if writeTransaction == nil, let readTransaction, !readTransaction.isSuspended { return readTransaction }
            return transactionBeginningIfNeeded
        }
    }

    /// The read snapshot when reads use it as it is (no write, not suspended: ``transaction``'s
    /// common case), not retained: the core holds it, and only ending or renewing it, which no
    /// search does, lets go of it. Nil otherwise (then ``transaction`` decides).
    var liveSnapshot: Unmanaged<Transaction>? {
        @inline(__always) get {
            guard writeTransaction == nil, let readTransaction, !readTransaction.isSuspended else { return nil }
            return Unmanaged.passUnretained(readTransaction)
        }
    }

    /// Runs `body` with ``transaction``, retained only when it is not ``liveSnapshot`` (a read
    /// per element or per lookup then costs no retain and release of it).
    @inline(__always)
    func withTransaction<R>(_ body: (Transaction) -> R) -> R {
        if let snapshot = liveSnapshot { return snapshot._withUnsafeGuaranteedRef(body) }
        return body(transaction)
    }

    /// ``transaction`` in every other case: a write, a write that ran out of space, a suspended
    /// or missing snapshot.
    @inline(never)
    private var transactionBeginningIfNeeded: Transaction {
        if let writeTransaction {
            if writeTransaction.resourceFailure == nil { return writeTransaction }
            // The write ran out of space and LMDB refuses to read it any more: reads see the
            // state before it (the write will be rolled back).
            if !noticedWriteFailure {
                noticedWriteFailure = true
                noteChange()
            }
        }
        if let readTransaction {
            if !readTransaction.isSuspended { return readTransaction }
            // Let go while this core writes (see `beginWrite`): the newest committed version
            // is the state before the write, which holds the write lock.
            do {
                try readTransaction.renew()
                changeStamp = nextChangeStamp()
                verifyStoredLayouts(readTransaction)
                return readTransaction
            } catch {
                self.readTransaction = nil
            }
        }
        do {
            let txn = try file.environment.beginRead()
            readTransaction = txn
            changeStamp = nextChangeStamp()
            StorageLog.readStarted(file: file.logId, version: txn.version)
            verifyStoredLayouts(txn)
            return txn
        } catch {
            throwRealmException("Could not begin a read transaction on '\(environmentPath)': \(error)")
        }
    }

    func verifyInWrite(_ message: @autoclosure () -> String = Realm.writeRequiredMessage) {
        verifyThread()
        if writeTransaction == nil {
            if isFrozen {
                throwRealmException("Attempting to modify a frozen object - call thaw on the Object instance first.")
            }
            throwRealmException(message())
        }
    }

    func noteChange() { changeStamp = nextChangeStamp() }

    // MARK: - Transactions

    /// `holdingGate`: the caller already took the file's handle gate for this write (an
    /// `asyncWrite` that waited for it by suspending); the transaction takes it over.
    func beginWrite(holdingGate: Bool = false) {
        verifyThread()
        if isFrozen { throwRealmException("Can't perform transactions on a frozen Realm") }
        if writeTransaction != nil { throwRealmException("The Realm is already in a write transaction") }
        if configuration.readOnly {
            throwRealmException("Can't perform transactions on a read-only Realm: '\(environmentPath)' was opened "
                + "with readOnly: true.")
        }
        if !holdingGate, !isDeliveringNotifications, !observers.isEmpty {
            // Realm: "before beginning the write transaction, beginWrite updates the Realm to
            // the latest version, as if refresh() had been called, and generates notifications":
            // an observer added since the last delivery gets its `.initial` before the write,
            // and the write as an update after. (Not while an `asyncWrite` holds the writers'
            // gate: a block writing synchronously would wait for it.)
            _ = refresh()
            if writeTransaction != nil { throwRealmException("The Realm is already in a write transaction") }
        }
        if let limit = configuration.maximumNumberOfActiveVersions, limit > 0 {
            let active = file.environment.activeVersionCount()
            if active > Int(clamping: limit) {
                throwRealmException("Number of active versions (\(active)) in the Realm exceeded the limit of \(limit)")
            }
        }
        if let readTransaction {
            if file.environment.wantsToGrow {
                // The map can only grow while the process has no transaction: end the
                // snapshot (a new one is taken after the write).
                readTransaction.abort()
                self.readTransaction = nil
            } else {
                // The write reads the newest version, and the snapshot moves there when the
                // write ends: let go of its version now, before waiting for the write lock, so
                // that it pins none of the pages the other writers free meanwhile (realm-core
                // likewise moves a Realm's read lock to the newest version as its write begins).
                readTransaction.suspend()
            }
        }
        StorageLog.log(.trace, Category.Storage.transaction, file: file.logId, "acquire writemutex")
        do {
            writeTransaction = try file.environment.beginWrite(holdingGate: holdingGate)
        } catch {
            throwRealmException("Could not begin a write transaction on '\(environmentPath)': \(error)")
        }
        if let writeTransaction {
            StorageLog.log(.trace, Category.Storage.transaction, file: file.logId, "writemutex acquired")
            StorageLog.log(.trace, Category.Storage.transaction, file: file.logId,
                           "Start write \(StorageLog.nextId()): \(writeTransaction.version) on '\(environmentPath)'")
        }
        keyCounters.removeAll()
        columnLog.beginWrite()
        noteChange()
        if let writeTransaction { verifyStoredLayouts(writeTransaction) }
    }

    /// Commits the write transaction; returns the deliveries of the commit that it started on
    /// the actors of other Realms of the file with observers (see ``Realm/asyncWrite(_isolation:_:)``).
    @discardableResult
    func commitWrite(withoutNotifying skipped: [NotificationToken] = []) throws -> [Task<Void, Never>] {
        verifyThread()
        for token in skipped where !observers.current.contains(where: { $0 === token.observer }) {
            throwRealmException("Incorrect Realm: only notifications for the Realm being modified can be skipped.")
        }
        guard let txn = writeTransaction else {
            throwRealmException("Can't commit a non-existing write transaction")
        }
        let version = txn.version
        do {
            // First: the sync hook may write objects too (a link set for a target created here).
            try recordSyncChanges()
            try columnLog.flush(in: txn)
            try flushBacklinkCounts(txn)
            try persistKeyCounters(txn)
            try persistChangeRecord(txn)
            StorageLog.log(.trace, Category.Storage.transaction, file: file.logId,
                           "Committing version \(version) to disk")
            try txn.commitUnlessFailed()
        } catch let error as StorageError {
            txn.abort()
            writeTransaction = nil
            discardPending(rolledBack: true)
            noteChange()
            committedSyncChanges = false
            let failure = commitError(error)
            Logger.log(.error, Category.Storage.transaction, failure.message)
            throw failure
        } catch {
            committedSyncChanges = false
            // The sync outbox could not be written: nothing of the transaction is kept.
            txn.abort()
            writeTransaction = nil
            discardPending(rolledBack: true)
            noteChange()
            throw error
        }
        Logger.log(.debug, Category.Storage.transaction, "Committed version \(version) of '\(environmentPath)'")
        StorageLog.log(.trace, Category.Storage.transaction, file: file.logId, "writemutex released")
        writeTransaction = nil
        announceSyncCommit()
        if let catalog = pendingCatalog {
            file.publish(Array(pendingTables.values), catalog: catalog, version: version)
        }
        noteOwnCommit(version, changedSchema: pendingCatalog != nil)
        discardPending(rolledBack: false)
        let advanced = advanceSnapshot()
        deliverNotifications(skipping: skipped.compactMap(\.observer), afterOwnCommit: true)
        if !advanced {
            // A write that changed nothing makes no new version, but Realm still tells the
            // Realm's own observers that a write transaction ended.
            for handle in observers.current where !handle.isInvalidated && handle.observer is RealmObserver
                && !skipped.contains(where: { $0.observer === handle }) {
                handle.observer.advance(ChangeSet(), notify: true)
            }
        }
        return file.observation.announceNewVersion(except: observationId)
    }

    func cancelWrite() {
        verifyThread()
        guard let txn = writeTransaction else { throwRealmException("Can't cancel a non-existing write transaction") }
        txn.abort()
        writeTransaction = nil
        discardPending(rolledBack: true)
        advanceSnapshot()
    }

    private func commitError(_ error: StorageError) -> Realm.Error {
        switch error.kind {
        case .mapFull:
            Realm.Error(.fileSizeLimitReached, "The write transaction was rolled back: '\(environmentPath)' would "
                + "grow past the \(file.environment.mapSize) bytes mapped. Raise "
                + "Realm.Configuration.maximumFileSize if it is set, write less per transaction, or close the "
                + "other Realms of this file in this process so the map can grow.", fileURL: environmentPath)
        case .diskFull,
             .other where error.code == EIO && RealmErrors.diskIsNearlyFull(environmentPath):
            Realm.Error(.diskFull, "The write transaction was rolled back: the disk holding '\(environmentPath)' is "
                + "full. Free space and try again.", fileURL: environmentPath)
        default:
            Realm.Error(.fail, "The write transaction was rolled back: \(error).", fileURL: environmentPath)
        }
    }

    /// Makes the tables a migration rewrote this core's tables for the rest of the write; they
    /// are published with the catalog when it commits.
    func adoptMigratedTables(_ tables: [Table], catalog: SchemaCatalog) {
        cachedTables = (nil, nil)
        columnLog.forgetDeltaStates()
        // The tables used before the migration have the old layout: this core no longer uses them.
        storedLayoutCheck = StoredLayoutCheck()
        for table in tables { pendingTables[ObjectIdentifier(table.info.objectType)] = table }
        pendingCatalog = catalog
    }

    /// The schema the current write transaction sees (with the classes it added), else the file's.
    var currentCatalog: SchemaCatalog { pendingCatalog ?? file.catalog }
    /// Whether the current write transaction added classes to the schema.
    var hasPendingCatalog: Bool { pendingCatalog != nil }

    private func discardPending(rolledBack: Bool) {
        if rolledBack, !pendingTables.isEmpty {
            for table in pendingTables.values {
                file.keep(table)
                if file.catalog.storedClass(named: table.info.className) == nil {
                    rolledBackTables.insert(ObjectIdentifier(table))
                }
            }
        }
        dynamicClasses?.endWrite()
        cachedTables = (nil, nil)
        noticedWriteFailure = false
        if rolledBack {
            columnLog.noteCommit(nil)
            committedLogHeader = nil
        }
        pendingLogHeader = nil
        recordedChanges.reset()
        if !syncClearedCollections.isEmpty { syncClearedCollections = [] }
        columnLog.reset()
        backlinkCountLog.reset()
        pendingTables = [:]
        pendingCatalog = nil
        keyCounters.removeAll()
        storedIndexCheck.endWrite()
    }

    /// Moves the pinned snapshot to the newest version.
    @discardableResult
    func advanceSnapshot() -> Bool {
        let before = readTransaction?.isActive == true ? readTransaction?.version : nil
        do {
            if let readTransaction, readTransaction.isActive {
                try readTransaction.renew()
            } else {
                readTransaction = try file.environment.beginRead()
            }
        } catch {
            readTransaction = nil
        }
        noteChange()
        if let readTransaction { verifyStoredLayouts(readTransaction) }
        return before != readTransaction?.version
    }

    func refresh() -> Bool {
        verifyThread()
        if writeTransaction != nil || isFrozen { return false }
        let advanced = advanceSnapshot()
        deliverNotifications()
        // The new version may be another process's commit: the other Realms of this process
        // learn of it too.
        if advanced { file.observation.announceNewVersion(except: observationId) }
        return advanced
    }

    /// Ends the snapshot (and any write); accessors read so far become invalidated. A frozen
    /// core is closed instead (``closeFrozen()``).
    func invalidate() {
        verifyThread()
        if isFrozen { return closeFrozen() }
        if let writeTransaction {
            writeTransaction.abort()
            self.writeTransaction = nil
            discardPending(rolledBack: true)
        }
        readTransaction?.abort()
        readTransaction = nil
        epoch += 1
        noteChange()
    }

    /// Realm closes a frozen Realm on `invalidate()` (RLMRealm.invalidate calls realm-core's
    /// `close()` when frozen): its objects, results and collections are invalidated, and asking
    /// it for objects traps (``verifyRealmRead()``); freezing the version again makes a new one.
    ///
    /// Other threads may be reading the core, so nothing they read is freed: the snapshot stays
    /// pinned until the core goes. Every read already compares `epoch` or `changeStamp` (an
    /// object's cached row, a collection's or results' epoch), so bumping them is the whole
    /// check, and reads of live Realms pay nothing new. They are plain words: a read racing
    /// this call (a programming error in Realm, whose close frees the snapshot under it) sees
    /// the old or the new value, so it reads the frozen value or traps; a read ordered after it
    /// (a lock, a queue hop) traps.
    private func closeFrozen() {
        // RLMRealm.invalidate calls realm-core's `Realm::invalidate()`, whose `verify_open()`
        // refuses a Realm already closed.
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { Self.trapClosed() }
        epoch &+= 1
        noteChange()
    }

    /// realm-core's `Realm::verify_open()` message, for a frozen Realm `invalidate()` closed.
    static func trapClosed() -> Never { throwRealmException("Cannot access realm that has been closed.") }

    /// realm-swift's RLMVerifyRealmRead (before handing out objects or results): the thread,
    /// and that a frozen Realm was not closed by `invalidate()`.
    func verifyRealmRead() {
        verifyThread()
        if isClosed { throwRealmException("Cannot read from a frozen Realm which has been invalidated.") }
    }

    // MARK: - Reading

    /// The row of a managed object. Traps if it was deleted or invalidated.
    @inline(__always)
    func row(of object: ObjectBase, _ managed: ManagedObject) -> RowView {
        verifyThread()
        if object._rowCache.stamp == changeStamp { return RowView(bytes: object._rowCache.bytes) }
        guard managed.epoch == epoch, rolledBackTables.isEmpty || !wasRolledBack(managed.table),
              let bytes = transaction.get(managed.table.rows, integerKey: managed.key) else {
            throwRealmException("Object has been deleted or invalidated.")
        }
        // A frozen object may be read by several threads at once: its cache is set only when
        // its accessor is made (before it can be shared).
        if !isFrozen { object._rowCache = RowCache(stamp: changeStamp, bytes: bytes) }
        return RowView(bytes: bytes)
    }

    func objectExists(_ managed: ManagedObject) -> Bool {
        // Same epoch: not invalidated since the object was read (a core in no read transaction
        // yet, just opened, begins one here).
        guard !isClosed, managed.epoch == epoch, !wasRolledBack(managed.table) else { return false }
        return transaction.get(managed.table.rows, integerKey: managed.key) != nil
    }

    /// Whether a rolled-back write made `table` (its objects are gone for good).
    private func wasRolledBack(_ table: Table) -> Bool { rolledBackTables.contains(ObjectIdentifier(table)) }

    func rowView(_ table: Table, _ key: ObjectKey) -> RowView? {
        transaction.get(table.rows, integerKey: key).map(RowView.init(bytes:))
    }
}

extension Realm {
    static let writeRequiredMessage = "Attempting to modify object outside of a write transaction - call "
        + "beginWriteTransaction on an RLMRealm instance first."
    static let addRequiresWriteMessage = "Can only add, remove, or create objects in a Realm in a write "
        + "transaction - call beginWriteTransaction on an RLMRealm instance first."
}
