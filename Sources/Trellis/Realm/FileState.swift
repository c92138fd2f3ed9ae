import Foundation
import Synchronization

/// What every `Realm` of one file in this process shares: the environment, the stored schema
/// catalog and the tables bound so far.
final class FileState: Sendable {
    let environment: Environment
    let meta: DatabaseHandle
    let backlinks: DatabaseHandle
    /// Lists, sets and maps (see ``CollectionKey``).
    let collections: DatabaseHandle
    /// One change record per commit, keyed by version (see ``ChangeRecordEncoding``); nil in a
    /// read-only file written before change records existed.
    let changes: DatabaseHandle?
    /// The stored backlink counts (see ``BacklinkCountBlockKey``); nil in a read-only file of
    /// format 3 or older, whose counts are then summed from the backlinks.
    let backlinkCounts: DatabaseHandle?
    /// The Realms of this file in this process that have observers (see ``ObservationHub``).
    let observation = ObservationHub()
    /// The turn-taking of `asyncWrite`s.
    let asyncWriters = AsyncWriteGate()
    /// Whether a Realm with a schema opened the file in this process: while it stays open, other
    /// opens must use the file's schema version (realm-core's coordinator check, ``Realm``).
    let hasBoundSchema = Mutex(false)
    /// The file's number in Realm's storage log lines (``StorageLog``).
    let logId = StorageLog.nextId()
    /// The change log's bounds for this process's commits (tests make them small).
    private let changeLogLimitsState = Mutex(ChangeLogLimits())
    var changeLogLimits: ChangeLogLimits {
        get { changeLogLimitsState.withLock { $0 } }
        set { changeLogLimitsState.withLock { $0 = newValue } }
    }

    private struct State {
        /// The newest catalog this process has read, and the committed version it was read at.
        /// The two move together and only forward (see ``publish(_:catalog:version:)``): a
        /// snapshot at or below `catalogVersion` finds every class it has in `catalog`.
        var catalog: SchemaCatalog
        var catalogVersion: Int
        /// The checksum of `catalog`'s stored bytes, once asked for (``catalogWithChecksum``).
        var catalogChecksum: UInt64?
        var tables: [ObjectIdentifier: Table] = [:]
        var tablesById: [UInt32: Table] = [:]
        /// Tables replaced by a later publish (after a migration), rebound with the file's
        /// indexes, or made by a write that was rolled back. Kept for the file's lifetime:
        /// accessors refer to their table without retaining it (``ManagedObject``).
        var retired: [Table] = []
    }
    private let state: Mutex<State>

    static let catalogKey = Array("catalog".utf8)
    static let backlinkCountsName = "backlinkCounts"
    static let magicKey = Array("magic".utf8)
    /// A checksum of the catalog's bytes (since catalog format 2), so a damaged catalog is
    /// detected instead of being read as a different schema.
    static let catalogChecksumKey = Array("catalog.sum".utf8)
    static let magic = Array("trellis".utf8)

    private init(environment: Environment, meta: DatabaseHandle, backlinks: DatabaseHandle,
                 backlinkCounts: DatabaseHandle?, collections: DatabaseHandle, changes: DatabaseHandle?,
                 catalog: SchemaCatalog, catalogVersion: Int)
    {
        self.environment = environment
        self.meta = meta
        self.backlinks = backlinks
        self.backlinkCounts = backlinkCounts
        self.collections = collections
        self.changes = changes
        self.state = Mutex(State(catalog: catalog, catalogVersion: catalogVersion))
    }

    /// The in-memory Realm's file this state removes when it closes (set once, at open).
    private let inMemoryFile = Mutex<InMemoryFile?>(nil)

    deinit {
        StorageLog.log(.detail, Category.Storage.all, file: logId, "DB closed")
        inMemoryFile.withLock { $0 }?.removeIfUnchanged()
    }

    var catalog: SchemaCatalog { state.withLock { $0.catalog } }

    /// The catalog as of `txn` when it is newer than the one known (another process may have
    /// added classes since the file was loaded); the known one otherwise.
    ///
    /// A write transaction's catalog is read and returned, never kept: its version is the one
    /// its commit would take, so kept under that version it would stand for the next commit's
    /// catalog if the write were cancelled (or another process's commit took that version),
    /// and it may hold classes the write added and then dropped.
    func catalog(readingNewerFrom txn: Transaction) -> SchemaCatalog {
        guard txn.isReadOnly else {
            return (try? Self.readCatalog(txn, meta: meta, path: environment.path)) ?? catalog
        }
        let version = txn.version
        let known = state.withLock { $0.catalogVersion >= version ? $0.catalog : nil }
        if let known { return known }
        guard let stored = try? Self.readCatalog(txn, meta: meta, path: environment.path) else { return catalog }
        return state.withLock { state in
            // Only a newer catalog replaces the known one (another thread may have read one).
            if version > state.catalogVersion {
                state.catalog = stored
                state.catalogVersion = version
                state.catalogChecksum = nil
            }
            return state.catalog
        }
    }

    /// The known catalog with the checksum its stored bytes have (computed once per catalog).
    var catalogWithChecksum: (catalog: SchemaCatalog, checksum: UInt64) {
        state.withLock { state in
            if let checksum = state.catalogChecksum { return (state.catalog, checksum) }
            let checksum = state.catalog.encoded().withUnsafeBytes(Self.checksum)
            state.catalogChecksum = checksum
            return (state.catalog, checksum)
        }
    }

    /// The checksum of the catalog as `txn` sees it: it changes with every change of the
    /// schema; nil in a file of catalog format 1, which has none.
    func storedCatalogChecksum(_ txn: Transaction) -> UInt64? {
        let stored = Self.catalogChecksumKey.withUnsafeBytes { txn.get(meta, key: $0) }
        guard let stored, stored.count == 8 else { return nil }
        return stored.loadUnaligned(as: UInt64.self)
    }

    /// Keeps `table` for the file's lifetime: accessors made from it refer to it unretained.
    func keep(_ table: Table) {
        state.withLock { $0.retired.append(table) }
    }

    // MARK: - Frozen snapshots

    /// Frozen Realms by version, shared by every freeze of that version in the process (each
    /// holds one LMDB reader slot). Weak: a frozen Realm lives as long as its objects use it.
    private struct WeakCore: @unchecked Sendable {
        // @unchecked Sendable: only frozen cores are stored here, and frozen cores may be used
        // from any thread.
        weak var core: RealmCore?
    }
    private let frozenCores = Mutex<[Int: WeakCore]>([:])

    /// The frozen core of `version`, made by `make` if there is none.
    func frozenCore(version: Int, _ make: () -> RealmCore) -> RealmCore {
        frozenCores.withLock { cores in
            // A frozen core `invalidate()` closed is never handed out again.
            if let existing = cores[version]?.core, !existing.isClosed { return existing }
            let core = make()
            cores = cores.filter { $0.value.core != nil }
            cores[version] = WeakCore(core: core)
            return core
        }
    }

    func table(for type: ObjectBase.Type) -> Table? {
        state.withLock { $0.tables[ObjectIdentifier(type)] }
    }

    func table(id: UInt32) -> Table? {
        state.withLock { $0.tablesById[id] }
    }

    /// Records tables once they may be used by every Realm of the process: bound in a snapshot,
    /// or created by a transaction that committed.
    ///
    /// `catalog` is the catalog the tables were bound under. It replaces the known one only with
    /// `version`, the committed version it was read at (or written by), and only when that is no
    /// older than the known one's. Without a version it is a catalog taken from this state,
    /// perhaps long ago: a thread that opened the file with the catalog it found, while another
    /// thread read a newer one, would otherwise put the older one back under the newer version,
    /// and classes created in between would read as absent (issue 34, defect 1).
    func publish(_ tables: [Table], catalog: SchemaCatalog, version: Int? = nil) {
        state.withLock { state in
            if let version, version >= state.catalogVersion {
                state.catalog = catalog
                state.catalogVersion = version
                state.catalogChecksum = nil
            }
            for table in tables {
                let type = ObjectIdentifier(table.info.objectType)
                if let current = state.tables[type] {
                    // Every open of the file binds its classes again; a table that did not change
                    // stays the same object, so accessors made from it on other threads stay valid.
                    if current.tableId == table.tableId, current.hasSameDatabases(as: table) { continue }
                    state.retired.append(current)
                }
                state.tables[type] = table
                state.tablesById[table.tableId] = table
            }
        }
    }

    // MARK: - Opening

    private static let registry = Mutex<[String: WeakFileState]>([:])

    /// Waits until no thread of this process is opening (or creating) a file.
    static func waitForOpenings() {
        registry.withLock { _ in }
    }

    /// Whether some Realm of this process still has `path` open (an answer that may be stale at
    /// once: to act on it, ``reserve(path:for:)``).
    static func isOpen(path: String) -> Bool {
        registry.withLock { $0[path]?.state != nil }
    }
    private struct WeakFileState { weak var state: FileState? }

    /// The shared state of the file at `path`, opening it (and initialising a new file) if needed.
    ///
    /// Waits while another thread of this process has the file reserved (compacting it on
    /// launch, migrating it with `performMigration(for:)`, deleting it; see
    /// ``reserve(path:for:)``), outside the registry's lock: the reserving thread may run the
    /// configuration's blocks, which may open other files.
    static func shared(path: String, configuration: Realm.Configuration) throws -> FileState {
        var waited = false
        while true {
            if let state = try openUnlessReserved(path: path, configuration: configuration) { return state }
            if !waited { willWaitForReservationHook.withLock { $0 }?(path) }
            waited = true
            usleep(200)
        }
    }

    /// The shared state of the file at `path`, opened if needed; nil while another thread has it
    /// reserved.
    private static func openUnlessReserved(path: String, configuration: Realm.Configuration) throws -> FileState? {
        try registry.withLock { registry in
            if let reservation = reservations.withLock({ $0[path] }) {
                guard reservation.thread == currentThread else { return nil }
                switch reservation.purpose {
                case .migration: break  // performMigration(for:) opens the file it reserved
                case .compaction:
                    throw Realm.Error(.fail, "Cannot open '\(path)' from its shouldCompactOnLaunch block: the file is "
                        + "being compacted. Open it after the block returns.", fileURL: path)
                case .deletion:
                    throw Realm.Error(.fail, "Cannot open '\(path)' while this thread deletes it.", fileURL: path)
                }
            }
            let key = try EncryptionKey.forFile(configuration.encryptionKey, path: path)
            if let existing = registry[path]?.state {
                #if !TRELLIS_LMDB
                guard existing.environment.encryptionKey == key else {
                    throw EncryptionKey.mismatched(path)
                }
                #endif
                return existing
            }
            if configuration.inMemoryIdentifier != nil { discardClosedInMemoryData(path: path) }
            let environment: Environment
            do {
                #if TRELLIS_LMDB
                environment = try Environment.shared(path: path, readOnly: configuration.readOnly,
                                                     initialMapSize: configuration.initialMapSize,
                                                     mapSizeLimit: configuration.maximumFileSize ?? Int.max,
                                                     verifiesFile: configuration.verifiesFileOnOpen,
                                                     expectedDatabases: expectedDatabases(configuration))
                #else
                environment = try Environment.shared(path: path, readOnly: configuration.readOnly,
                                                     initialMapSize: configuration.initialMapSize,
                                                     mapSizeLimit: configuration.maximumFileSize ?? Int.max,
                                                     verifiesFile: configuration.verifiesFileOnOpen,
                                                     expectedDatabases: expectedDatabases(configuration),
                                                     encryptionKey: key)
                #endif
            } catch {
                throw RealmErrors.opening(path, error)
            }
            let state = try load(environment, path: path, columnShift: configuration.columnChunkShift)
            if configuration.inMemoryIdentifier != nil {
                state.inMemoryFile.withLock { $0 = InMemoryFile(path: path) }
            }
            StorageLog.log(.detail, Category.Storage.all, file: state.logId, "Open file: \(path)")
            registry[path] = WeakFileState(state: state)
            return state
        }
    }

    /// Realm's in-memory Realms keep their data only while some instance of them is open: "when
    /// all in-memory Realm instances with a particular identifier go out of scope with no
    /// references, all data in that Realm is deleted". Trellis keeps an in-memory Realm in a file
    /// of this process's own (``Realm/Configuration/path``), so the first open after the last one
    /// closed starts from an empty file. Called with the registry locked and no open state for
    /// `path`, so no Realm of this process reads the file being removed. (The last instance's
    /// close removes the file too, see ``InMemoryFile``: this covers a process that ended first.)
    private static func discardClosedInMemoryData(path: String) {
        for file in [path, path + "-lock"] { unlink(file) }
    }

    // MARK: - Reserving a file

    /// What a thread reserves a file for (see ``reserve(path:for:)``).
    enum ReservationPurpose: Sendable {
        /// Compacting it on launch (``FilePreparation/compactIfAsked(_:path:)``).
        case compaction
        /// `Realm.performMigration(for:)`: the reserving thread opens, migrates and closes it.
        case migration
        /// `Realm.deleteFiles(for:)` and `deleteRealmIfMigrationNeeded`.
        case deletion
    }

    private struct Reservation {
        let thread: UInt
        let purpose: ReservationPurpose
    }

    /// Files a thread of this process has reserved, with that thread. Taken and checked under the
    /// registry's lock (lock order: registry, then this).
    private static let reservations = Mutex<[String: Reservation]>([:])

    /// For tests: called with the path when an opening begins to wait for a reservation.
    static let willWaitForReservationHook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// For tests: called with the path and purpose by `performMigration(for:)` and
    /// `deleteFiles(for:)` once they hold the file, before they migrate or delete it.
    static let didReserveHook = Mutex<(@Sendable (String, ReservationPurpose) -> Void)?>(nil)

    private static var currentThread: UInt { CurrentThread.identity }

    /// A thread's hold on a file no Realm of the process has open (``reserve(path:for:)``).
    struct FileReservation {
        let path: String
        /// False when the thread already held the file (a deletion inside `performMigration`'s
        /// open): the outer reservation ends it.
        let owns: Bool

        /// Lets openings of the file go ahead.
        func end() {
            if owns { FileState.reservations.withLock { _ = $0.removeValue(forKey: path) } }
        }
    }

    /// Reserves `path` for `purpose`, or returns nil when a Realm of this process has it open.
    ///
    /// Checking "is the file open" and acting on the answer must be one step with the openings:
    /// while reserved, no other thread of the process opens the file (``shared(path:configuration:)``
    /// waits), so the file is neither compacted, migrated nor deleted under a Realm that opened
    /// it just after the check. Two environments of one file in a process would also break each
    /// other: closing one releases the process's POSIX locks on the lock file and clears its
    /// reader slots (the other's live snapshots then look dead to writers, which reuse their
    /// pages), and a rename or unlink replaces the file under the other's map (its later commits
    /// would be lost). Waits while the file's previous environment closes or another thread holds
    /// it. A live environment without a FileState (a transaction ending) counts as open for a
    /// compaction, which is then skipped; a migration or deletion waits up to a second for it.
    ///
    /// A thread that holds the file already gets a reservation that `owns` nothing (a deletion
    /// for `deleteRealmIfMigrationNeeded` inside the open `performMigration` makes); a compaction
    /// on that open is skipped.
    static func reserve(path: String, for purpose: ReservationPurpose) -> FileReservation? {
        // How long a migration or deletion waits for an environment without a FileState to go
        // before it counts as open (it never lasts longer than a transaction ending).
        let patience = Date().addingTimeInterval(1)
        while true {
            let outcome: Bool?? = registry.withLock { registry in
                if registry[path]?.state != nil { return .some(nil) }
                if let held = reservations.withLock({ $0[path] }), held.thread == currentThread {
                    // Compacting on the open performMigration makes would let the block open the
                    // file the migration holds: skipped.
                    return purpose == .compaction ? .some(nil) : .some(false)
                }
                switch Environment.presence(path: path) {
                case .open where purpose == .compaction || Date() > patience: return .some(nil)
                case .open, .closing: return nil
                case .none: break
                }
                return reservations.withLock { reservations -> Bool?? in
                    if reservations[path] != nil { return nil }
                    reservations[path] = Reservation(thread: currentThread, purpose: purpose)
                    return .some(true)
                }
            }
            switch outcome {
            case .some(.some(let owns)): return FileReservation(path: path, owns: owns)
            case .some(.none): return nil
            case .none: usleep(200)
            }
        }
    }

    /// A generous estimate of the named databases `configuration`'s classes need: rows, primary
    /// keys, a column copy and its delta, and a few indexes per class, plus the file's own.
    private static func expectedDatabases(_ configuration: Realm.Configuration) -> Int {
        16 + (configuration.objectTypes?.count ?? 0) * 8
    }

    private static func load(_ environment: Environment, path: String, columnShift: Int) throws -> FileState {
        do {
            // An initialised file is read in a read transaction, which never waits for another
            // process's writer; only a new file (or one missing a database) needs the write lock.
            if let state = try loadInitialized(environment, path: path) { return state }
            if environment.isReadOnly { throw RealmErrors.notTrellis(path) }
            return try initialize(environment, path: path, columnShift: columnShift)
        } catch let error as StorageError {
            throw RealmErrors.opening(path, error)
        }
    }

    /// The state of a file that has every database and a catalog; nil when it needs initialising.
    private static func loadInitialized(_ environment: Environment, path: String) throws -> FileState? {
        let txn = try environment.beginRead()
        defer { txn.abort() }
        guard let meta = try txn.database(named: "meta", create: false) else {
            if txn.mainDatabaseEntryCount() > 0 { throw RealmErrors.notTrellis(path) }
            return nil
        }
        guard let backlinks = try txn.database(named: "backlinks", create: false),
              let collections = try txn.database(named: "collections", create: false)
        else {
            if environment.isReadOnly { throw RealmErrors.notTrellis(path) }
            return nil
        }
        let changes = try txn.database(named: "changes", create: false)
        if changes == nil && !environment.isReadOnly { return nil }
        let backlinkCounts = try txn.database(named: Self.backlinkCountsName, create: false)
        if backlinkCounts == nil && !environment.isReadOnly { return nil }
        if magicKey.withUnsafeBytes({ txn.get(meta, key: $0) }) == nil && !environment.isReadOnly { return nil }
        let catalog = try readCatalog(txn, meta: meta, path: path)
        return FileState(environment: environment, meta: meta, backlinks: backlinks, backlinkCounts: backlinkCounts,
                         collections: collections, changes: changes, catalog: catalog, catalogVersion: txn.version)
    }

    /// Creates the databases and the catalog of a new file (or the ones an older file lacks).
    private static func initialize(_ environment: Environment, path: String, columnShift: Int) throws -> FileState {
        let txn = try environment.beginWrite()
        var meta = try txn.database(named: "meta", create: false)
        if meta == nil {
            if txn.mainDatabaseEntryCount() > 0 {
                txn.abort()
                throw RealmErrors.notTrellis(path)
            }
            meta = try txn.database(named: "meta", create: true)
        }
        guard let meta, let backlinks = try txn.database(named: "backlinks", create: true),
              let collections = try txn.database(named: "collections", create: true),
              let changes = try txn.database(named: "changes", create: true, integerKeys: true)
        else {
            txn.abort()
            throw RealmErrors.notTrellis(path)
        }
        var catalog: SchemaCatalog
        let backlinkCounts: DatabaseHandle
        do {
            catalog = try readCatalog(txn, meta: meta, path: path, newFileColumnShift: columnShift)
            if let existing = try txn.database(named: Self.backlinkCountsName, create: false) {
                backlinkCounts = existing
            } else {
                // A file of format 3 or older: its counts are built from its backlinks, in this
                // transaction. (Format 2 files get format 4 when their column copies are built.)
                guard let created = try txn.database(named: Self.backlinkCountsName, create: true) else {
                    throw RealmErrors.notTrellis(path)
                }
                backlinkCounts = created
                try BacklinkCountBuilder.rebuild(created, fromBacklinks: backlinks, txn)
                if catalog.format == 3 {
                    // Format 4 (stored backlink counts); ``CompactUpgrade`` takes it on to the current format.
                    catalog.format = 4
                    try writeCatalog(catalog, txn: txn, meta: meta)
                    Logger.log(.info, Category.Storage.all, "Upgraded '\(path)' to file format \(catalog.format) "
                        + "(stored backlink counts)")
                }
            }
        } catch {
            txn.abort()
            throw error
        }
        // A write that found everything made already commits nothing and makes no version: the
        // catalog is claimed for the version before (an older claim only reads it again later).
        let version = txn.version - 1
        try txn.commit()
        return FileState(environment: environment, meta: meta, backlinks: backlinks, backlinkCounts: backlinkCounts,
                         collections: collections, changes: changes, catalog: catalog, catalogVersion: version)
    }

    /// The catalog as stored in `txn`; a new file (in a write transaction) gets an empty one,
    /// whose column copies keep `1 << newFileColumnShift` objects per chunk.
    static func readCatalog(_ txn: Transaction, meta: DatabaseHandle, path: String,
                            newFileColumnShift: Int = SchemaCatalog.defaultColumnShift) throws -> SchemaCatalog
    {
        let magic = magicKey.withUnsafeBytes { txn.get(meta, key: $0) }
        if let magic {
            guard Array(magic) == Self.magic else { throw RealmErrors.notTrellis(path) }
            let checksum = catalogChecksumKey.withUnsafeBytes { txn.get(meta, key: $0) }
            guard let stored = catalogKey.withUnsafeBytes({ txn.get(meta, key: $0) }),
                  checksum.map({ $0.count == 8 && $0.loadUnaligned(as: UInt64.self) == Self.checksum(stored) }) ?? true,
                  let catalog = SchemaCatalog.decode(stored),
                  checksum != nil || catalog.format < 2
            else {
                throw Realm.Error(.corruptFile, "The schema catalog of '\(path)' is damaged and cannot be read. "
                    + "Restore the file from a backup.", fileURL: path)
            }
            if catalog.format > SchemaCatalog.formatVersion {
                throw Realm.Error(.fileFormatUpgradeRequired, "'\(path)' was written by a newer version of Trellis "
                    + "(file format \(catalog.format); this version reads \(SchemaCatalog.formatVersion)). "
                    + "Upgrade Trellis to open it.", fileURL: path)
            }
            return catalog
        }
        guard !txn.isReadOnly else { throw RealmErrors.notTrellis(path) }
        var catalog = SchemaCatalog()
        catalog.columnShift = newFileColumnShift
        try magicKey.withUnsafeBytes { (k) in
            _ = try Self.magic.withUnsafeBytes { (v) in try txn.put(meta, key: k, value: v) }
        }
        try writeCatalog(catalog, txn: txn, meta: meta)
        return catalog
    }

    static func writeCatalog(_ catalog: SchemaCatalog, txn: Transaction, meta: DatabaseHandle) throws {
        let bytes = catalog.encoded()
        var checksum = bytes.withUnsafeBytes(Self.checksum)
        try catalogKey.withUnsafeBytes { (k) in
            _ = try bytes.withUnsafeBytes { (v) in try txn.put(meta, key: k, value: v) }
        }
        try catalogChecksumKey.withUnsafeBytes { (k) in
            _ = try withUnsafeBytes(of: &checksum) { (v) in try txn.put(meta, key: k, value: v) }
        }
    }

    /// FNV-1a, 64 bits: enough to notice damage (not an integrity guarantee against tampering).
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// Builders for the errors of opening a file.
enum RealmErrors {
    static func notTrellis(_ path: String) -> Realm.Error {
        Realm.Error(.notATrellisFile, "Failed to open Realm file at path '\(path)': it is not a Trellis database "
            + "(it has no Trellis schema catalog). "
            + "Check the path, or move the file away to create a new database there.", fileURL: path)
    }

    /// LMDB reports a write cut short by a full disk as EIO: a disk with (almost) no space left
    /// explains it.
    static func diskIsNearlyFull(_ path: String) -> Bool {
        var stats = statvfs()
        guard statvfs((path as NSString).deletingLastPathComponent, &stats) == 0 else { return false }
        let available = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        let total = UInt64(stats.f_blocks) * UInt64(stats.f_frsize)
        return available < 256 << 10 || available < total / 100
    }

    static func opening(_ path: String, _ error: any Error) -> Realm.Error {
        if let realmError = error as? Realm.Error { return realmError }
        guard let storage = error as? StorageError else {
            return Realm.Error(.fail, "Opening '\(path)' failed: \(error).", fileURL: path)
        }
        switch storage.kind {
        #if !TRELLIS_LMDB
        case .decryptionFailed:
            return EncryptionKey.decryptionFailed(path, detail: storage.reason)
        case .lockFileNotWritable:
            return Realm.Error(.filePermissionDenied, "Failed to open Realm file at path '\(path)' read-only: "
                + "Permission denied: \(storage.reason)", fileURL: path)
        #endif
        case .invalidFile, .versionMismatch:
            return notTrellis(path)
        case .corrupted:
            return Realm.Error(.corruptFile, "Failed to open Realm file at path '\(path)': it is damaged "
                + "(\(storage.reason)). Restore it from a backup.",
                               fileURL: path)
        case .permissionDenied where storage.code == EPERM:
            // Realm's message with the system's text for the errno: an immutable file (chattr +i).
            // EACCES keeps Trellis's advice (which file, or readOnly: true).
            return Realm.Error(.filePermissionDenied, "Failed to open Realm file at path '\(path)': "
                + "\(String(cString: strerror(storage.code))). Please use a path where your app has read-write "
                + "permissions.", fileURL: path)
        case .permissionDenied, .readOnlyFileSystem:
            return Realm.Error(.filePermissionDenied, "Failed to open Realm file at path '\(path)': Permission denied "
                + "(\(storage.reason)). Please use a path where your app has read-write permissions: check the "
                + "permissions of the file, its '-lock' file and its folder, or open it with readOnly: true.",
                               fileURL: path)
        case .fileNotFound:
            return Realm.Error(.fileNotFound, "Failed to open Realm file at path '\(path)': No such file or directory. "
                + "Create the folder first; a read-only Realm also needs an existing file.", fileURL: path)
        case .busy:
            return Realm.Error(.fileLocked, "'\(path)' is locked by another process (\(storage.reason)).",
                               fileURL: path)
        case .mapFull:
            return Realm.Error(.fileSizeLimitReached, "'\(path)' has reached its maximum size. Raise "
                + "Realm.Configuration.maximumFileSize, or close the other Realms of this file so the map can grow.",
                               fileURL: path)
        case .diskFull,
             .other where storage.code == EIO && diskIsNearlyFull(path):
            return Realm.Error(.diskFull, "The disk holding '\(path)' is full. Free space and try again.",
                               fileURL: path)
        case .readersFull:
            return Realm.Error(.tooManyReaders, "'\(path)' has no free reader slot: every slot of its lock file "
                + "holds a live snapshot (each open Realm and each frozen version holds one; slots of processes that "
                + "died are freed). Close Realms or frozen objects you no longer use, or end processes that keep "
                + "the file open.", fileURL: path)
        default:
            return Realm.Error(.fileAccess, "Failed to open Realm file at path '\(path)': \(storage.reason) "
                + "(code \(storage.code)).",
                               fileURL: path)
        }
    }
}
