// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Synchronization

/// One open LMDB environment: a memory-mapped database file shared by every `Realm` of the
/// process that opens the same path (LMDB forbids opening one file twice in a process).
///
/// The file is a single LMDB file (`MDB_NOSUBDIR`) with a `-lock` file beside it. Readers are
/// not tied to threads (`MDB_NOTLS`), so a `Realm` may pin its snapshot for as long as it likes.
final class Environment: Sendable {
    // Safe to share: LMDB's environment handle is thread-safe; the pointer itself never changes
    // after init and is closed only in deinit, when no transaction can hold it.
    nonisolated(unsafe) let handle: OpaquePointer
    let path: String
    let isReadOnly: Bool
    /// The largest size the map may grow to (``Realm/Configuration/maximumFileSize``).
    let mapSizeLimit: Int
    /// The named databases' handles (see ``DatabaseHandles`` for LMDB's rules on them).
    let handles = DatabaseHandles()
    /// The cursors the write transaction writes through (see ``WriteCursors``).
    let writeCursors: WriteCursors
    /// How many transactions of this process are live or being begun, and the current map size.
    /// The map may only be resized when no transaction is live (LMDB's rule), so both live
    /// behind one lock that every transaction start and end takes.
    private let mapState: Mutex<MapState>
    /// The sync-on-commit setting last given to LMDB (nil: none yet).
    private let syncOnCommit = Mutex<Bool?>(nil)

    struct MapState {
        var liveTransactions = 0
        var mapSize: Int
    }

    /// How many named databases this environment can open (LMDB's `maxdbs`, fixed when the file
    /// is opened). LMDB copies one word per possible database at the start of every write
    /// transaction, so the limit is sized to the file (``databaseLimit(forDatabases:)``) rather
    /// than set high once for all: 4,096 cost 14,000 instructions per commit, 1,024 about 3,500.
    let databaseLimit: UInt32

    /// The smallest limit an environment opens with: about 250 classes of four databases each.
    static let minimumDatabaseLimit: UInt32 = 1024

    /// The limit for a file that holds (or is about to hold) `count` named databases: twice that
    /// and then some, as a power of two, so classes can be added without reopening the file.
    static func databaseLimit(forDatabases count: Int) -> UInt32 {
        let wanted = UInt32(clamping: max(0, count) * 2 + 128)
        guard wanted > minimumDatabaseLimit else { return minimumDatabaseLimit }
        return UInt32(clamping: 1 << (UInt32.bitWidth - (wanted - 1).leadingZeroBitCount))
    }
    /// Reader slots in the lock file: one per live snapshot of every process (each `Realm`,
    /// each frozen version). Slots of processes that died are cleared (``clearDeadReaders()``).
    static let defaultMaximumReaders: UInt32 = 4096

    /// Opens the file with a map of `initialMapSize` bytes (or the file's size, if larger) that
    /// may grow up to `mapSizeLimit`.
    /// `expectedDatabases`: how many named databases the schema being opened may create (the
    /// limit also covers twice what the file holds already).
    init(path: String, readOnly: Bool, initialMapSize: Int, mapSizeLimit: Int,
         maximumReaders: UInt32 = Environment.defaultMaximumReaders, expectedDatabases: Int = 0) throws
    {
        let mapSize = min(initialMapSize, mapSizeLimit)
        try LockFile.reserveSpace(path: path + "-lock", readers: maximumReaders)
        var limit = Self.databaseLimit(forDatabases: expectedDatabases)
        var env = try Self.open(path, readOnly: readOnly, mapSize: mapSize, readers: maximumReaders, databases: limit)
        // The file's own count is known only once it is open: a file with more databases than
        // the schema suggests is opened again with room for them (nothing else uses it yet).
        let stored = Self.namedDatabaseCount(env)
        if Self.databaseLimit(forDatabases: stored) > limit {
            mdb_env_close(env)
            limit = Self.databaseLimit(forDatabases: max(stored, expectedDatabases))
            env = try Self.open(path, readOnly: readOnly, mapSize: mapSize, readers: maximumReaders, databases: limit)
        }
        self.handle = env
        self.databaseLimit = limit
        self.writeCursors = WriteCursors.allocate(databaseLimit: limit)
        self.path = path
        self.isReadOnly = readOnly
        self.mapSizeLimit = max(mapSizeLimit, mapSize)
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        self.mapState = Mutex(MapState(mapSize: max(mapSize, info.me_mapsize)))
        var statistics = MDB_stat()
        self.pageSize = mdb_env_stat(env, &statistics) == 0 ? Int(statistics.ms_psize) : 0
        self.mapBase = Atomic(0)
        self.mapEnd = Atomic(0)
        self.knownFileEnd = Atomic(0)
        noteMapBounds()
    }

    /// Opens the LMDB environment of `path` with room for `databases` named databases.
    private static func open(_ path: String, readOnly: Bool, mapSize: Int, readers: UInt32,
                             databases: UInt32) throws -> OpaquePointer
    {
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "creating the environment")
        guard let env else { throw StorageError(code: ENOMEM, operation: "creating the environment") }
        do {
            try lmdbCheck(mdb_env_set_maxdbs(env, databases), "setting the database limit")
            try lmdbCheck(mdb_env_set_maxreaders(env, readers), "setting the reader limit")
            try lmdbCheck(mdb_env_set_mapsize(env, mapSize), "setting the map size")
            var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
            if readOnly { flags |= UInt32(MDB_RDONLY) }
            try lmdbCheck(mdb_env_open(env, path, flags, 0o644), "opening '\(path)'")
            // Reader slots of processes that were killed pin old snapshots (the file then grows
            // without bound) and fill the table: free them first.
            var dead: Int32 = 0
            mdb_reader_check(env, &dead)
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// How many named databases the newest version of the file holds (the entries of LMDB's
    /// main database); 0 when it cannot be read, which a later open of the databases reports.
    private static func namedDatabaseCount(_ env: OpaquePointer) -> Int {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0, let txn else { return 0 }
        defer { mdb_txn_abort(txn) }
        var stat = MDB_stat()
        guard mdb_stat(txn, DatabaseHandles.mainDatabase, &stat) == 0 else { return 0 }
        return Int(stat.ms_entries)
    }

    // MARK: - Values past the end of the file

    /// Where the map is, and the address of the end of the file as last seen. A value that
    /// seems to reach past the end (only a damaged file has one) is checked against the file's
    /// size now: reading it would stop the process with SIGBUS. The map only moves when it is
    /// resized, which refreshes these (``noteMapBounds()``).
    private let mapBase: Atomic<UInt>
    private let mapEnd: Atomic<UInt>

    /// The size of the file's pages.
    let pageSize: Int

    /// Where the pages are, for reading leaf pages in place (``Cursor/appendAllIntegerKeyed(keys:values:)``);
    /// nil while the map's place is unknown.
    var pageLayout: PageLayout? {
        let base = mapBase.load(ordering: .relaxed), end = mapEnd.load(ordering: .relaxed)
        guard base != 0, end > base, pageSize >= 512 else { return nil }
        return PageLayout(mapStart: base, mapEnd: end, pageSize: pageSize,
                          knownFileEnd: knownFileEnd.load(ordering: .relaxed), environment: self)
    }

    /// The map's address range as last noted; empty when it is unknown. For tests.
    var mapRange: Range<UInt> {
        let base = mapBase.load(ordering: .relaxed)
        return base..<max(base, mapEnd.load(ordering: .relaxed))
    }
    private let knownFileEnd: Atomic<UInt>

    /// Records where the map is now and how long the file is.
    private func noteMapBounds() {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        // `info.me_mapaddr` is not the map's address (it is zero unless MDB_FIXEDMAP). Unknown,
        // an empty range turns the check off rather than misjudging every address.
        let mapSize = Int(info.me_mapsize)
        let base = MapAddress.find(environment: handle) ?? 0
        mapBase.store(base, ordering: .relaxed)
        mapEnd.store(base == 0 ? 0 : base &+ UInt(mapSize), ordering: .relaxed)
        knownFileEnd.store(base &+ UInt(fileSize()), ordering: .relaxed)
    }

    /// The size of the open file, through its descriptor: the path may have been moved or
    /// deleted while the file is open, and the map still reads the file itself. Unknown
    /// counts as unlimited, so a failure here never hides data.
    private func fileSize() -> Int {
        var descriptor: mdb_filehandle_t = -1
        var info = stat()
        guard mdb_env_get_fd(handle, &descriptor) == 0, fstat(descriptor, &info) == 0 else { return Int.max / 2 }
        return Int(info.st_size)
    }

    /// Whether `count` bytes at `address` lie within the file (or outside the map altogether,
    /// as the pages a write transaction is changing do).
    @inline(__always)
    func isReadable(_ address: UnsafeRawPointer?, count: Int) -> Bool {
        guard let address else { return count == 0 }
        let start = UInt(bitPattern: address)
        let end = start &+ UInt(count)
        if start < mapBase.load(ordering: .relaxed) || start >= mapEnd.load(ordering: .relaxed)
            || end <= knownFileEnd.load(ordering: .relaxed)
        {
            return true
        }
        // The file may have grown since it was last measured (commits of this or another process).
        let fileEnd = mapBase.load(ordering: .relaxed) &+ UInt(fileSize())
        knownFileEnd.store(fileEnd, ordering: .relaxed)
        return end <= fileEnd
    }

    deinit {
        Self.willCloseHook.withLock { $0 }?(path)
        mdb_env_close(handle)
        writeCursors.deallocate()  // every transaction, and with it every cursor, has ended
        Self.forgetClosed(path: path, identity: ObjectIdentifier(self))
    }

    // MARK: - Named databases

    /// Opens a handle for every database of the file that has none, in a short read
    /// transaction, and publishes them. `holdingGate`: the caller (a write transaction about
    /// to begin) already holds the handle gate.
    func openMissingDatabases(holdingGate: Bool) throws {
        if !holdingGate { handles.gate.acquire() }
        defer { if !holdingGate { handles.gate.release() } }
        let txn = try Transaction.begin(self, readOnly: true)
        let opened: [String: MDB_dbi]
        do {
            opened = try handles.openMissing(in: txn, limit: databaseLimit)
        } catch {
            mdb_txn_abort(txn)
            transactionEnded()
            throw error
        }
        // A read transaction's handles outlive it only if it commits.
        let code = mdb_txn_commit(txn)
        transactionEnded()
        try lmdbCheck(code, "keeping the database handles")
        handles.publish(opened)
    }

    // MARK: - Dead readers

    /// Frees the reader slots of processes that died without ending their snapshots (killed,
    /// crashed): such a slot pins its snapshot, so the pages freed after it are never reused.
    /// Returns how many were freed.
    ///
    /// Run when the file is opened and as every write begins (before LMDB picks the pages it
    /// may reuse). It scans the reader table and asks the kernel once per other process whose
    /// slot it finds (a lock probe on the lock file): about a microsecond when one process
    /// uses the file.
    @discardableResult
    func clearDeadReaders() -> Int {
        var dead: Int32 = 0
        mdb_reader_check(handle, &dead)
        return Int(dead)
    }

    /// The version of the last commit (of any process).
    var lastCommittedVersion: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return Int(info.me_last_txnid)
    }

    /// How many versions the file keeps alive: from the oldest snapshot a live reader of any
    /// process holds to the last commit. LMDB reuses only pages freed before the oldest
    /// reader's version, so every version in between keeps its pages (Realm's
    /// `maximumNumberOfActiveVersions` counts these).
    func activeVersionCount() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        let last = Int(info.me_last_txnid)
        let oldest = ReaderTable(handle).oldestSnapshot ?? last
        return max(1, last - min(oldest, last) + 1)
    }

    // MARK: - Transactions

    func beginRead() throws -> Transaction {
        try Transaction(environment: self, readOnly: true)
    }

    /// Begins the write transaction; `holdingGate`: the caller took the handle gate for it.
    func beginWrite(holdingGate: Bool = false) throws -> Transaction {
        try Transaction(environment: self, readOnly: false, holdingGate: holdingGate)
    }

    /// Counts a transaction as live before LMDB begins it; when the map is more than half full
    /// and this is the only transaction of the process, doubles the map first (up to the
    /// limit). Called by ``Transaction`` only, paired with ``transactionEnded()``.
    func transactionStarting() {
        mapState.withLock { state in
            // A new file has no page to find the map by until its first commit.
            if mapBase.load(ordering: .relaxed) == 0 { noteMapBounds() }
            if state.liveTransactions == 0, shouldGrow(state) {
                let doubled = state.mapSize.multipliedReportingOverflow(by: 2)
                let grown = doubled.overflow ? mapSizeLimit : min(mapSizeLimit, doubled.partialValue)
                if mdb_env_set_mapsize(handle, grown) == 0 {
                    state.mapSize = grown
                    noteMapBounds()
                }
            }
            state.liveTransactions += 1
        }
    }

    func transactionEnded() {
        mapState.withLock { $0.liveTransactions -= 1 }
    }

    /// Adopts the map size another process grew the file to (after `MDB_MAP_RESIZED`).
    func adoptResizedMap() {
        mdb_env_set_mapsize(handle, 0)
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        mapState.withLock { $0.mapSize = max($0.mapSize, info.me_mapsize) }
        noteMapBounds()
    }

    /// Whether the next write would like to grow the map, which it can only do when no other
    /// transaction of the process is live: callers release their snapshot first.
    var wantsToGrow: Bool { mapState.withLock { shouldGrow($0) } }

    /// More than half the map is used and the limit allows more.
    private func shouldGrow(_ state: MapState) -> Bool {
        !isReadOnly && state.mapSize < mapSizeLimit && usedBytes() > state.mapSize / 2
    }

    /// Bytes the newest version's data occupies (its pages, without the free ones): what a
    /// compacted copy would hold.
    func dataBytes() throws -> Int {
        let txn = try Transaction.begin(self, readOnly: true)
        defer {
            mdb_txn_abort(txn)
            transactionEnded()
        }
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return try DatabaseHandles.usedPages(in: txn) * Int(stat.ms_psize)
    }

    /// The current map size in bytes.
    var mapSize: Int { mapState.withLock { $0.mapSize } }

    /// Bytes of the map in use: the pages up to the last one allocated by a commit.
    func usedBytes() -> Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(handle, &info)
        mdb_env_stat(handle, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }
}

// MARK: - Registry

extension Environment {
    private static let registry = Mutex<[String: WeakEnvironment]>([:])

    /// An environment of the registry; its entry stays until LMDB has closed it. A class, so
    /// that its deinit can read `identity` without copying the weak reference to itself.
    private final class WeakEnvironment: @unchecked Sendable {
        // @unchecked Sendable: read and written only under the registry's lock.
        weak var environment: Environment?
        let identity: ObjectIdentifier

        init(_ environment: Environment) {
            self.environment = environment
            self.identity = ObjectIdentifier(environment)
        }
    }

    /// For tests: called with an environment's path as it begins to close, before LMDB closes it.
    static let willCloseHook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Whether this process has an environment of a file: none, an open one, or one still closing.
    enum Presence { case none, open, closing }

    /// Whether this process has an environment of `path` (see ``Presence``).
    static func presence(path: String) -> Presence {
        registry.withLock { environments in
            guard let entry = environments[path] else { return .none }
            return entry.environment == nil ? .closing : .open
        }
    }

    /// Removes the entry of an environment LMDB has closed (called last by its deinit).
    private static func forgetClosed(path: String, identity: ObjectIdentifier) {
        registry.withLock { environments in
            if environments[path]?.identity == identity { environments[path] = nil }
        }
    }

    /// Returns the process's environment for `path`, opening it if needed.
    ///
    /// Every `Realm` of one file in one process shares the same environment, as LMDB requires.
    /// With `verifiesFile`, the first open in the process checks the file's structure first
    /// (``TreeVerifier``) and fails with `MDB_CORRUPTED` and the damage found.
    /// `expectedDatabases`: how many named databases the schema being opened may need (see
    /// ``databaseLimit``); used only when this call opens the environment.
    ///
    /// A file whose previous environment is still closing (its last Realm was just released on
    /// another thread) waits for it: LMDB's locks on the lock file are POSIX locks, which belong
    /// to the process, so closing the old environment's descriptor would release the new one's
    /// locks too. Another process's dead-reader check would then take this process for dead and
    /// free its snapshots' reader slots, and its writer would reuse pages those snapshots still
    /// read (a snapshot then counted more objects than were committed in it).
    static func shared(path: String, readOnly: Bool, initialMapSize: Int, mapSizeLimit: Int,
                       verifiesFile: Bool = true, expectedDatabases: Int = 0) throws -> Environment
    {
        while true {
            if let result = openOrReuse(path: path, readOnly: readOnly, initialMapSize: initialMapSize,
                                        mapSizeLimit: mapSizeLimit, verifiesFile: verifiesFile,
                                        expectedDatabases: expectedDatabases)
            {
                return try result.get()
            }
            // Closing takes microseconds (LMDB unmaps the file and closes its descriptors).
            usleep(50)
        }
    }

    /// The environment of `path`, opened if there is none; nil while its previous one closes.
    private static func openOrReuse(path: String, readOnly: Bool, initialMapSize: Int, mapSizeLimit: Int,
                                    verifiesFile: Bool, expectedDatabases: Int) -> Result<Environment, StorageError>?
    {
        registry.withLock { envs in
            if let entry = envs[path] {
                if let existing = entry.environment { return .success(existing) }
                return nil
            }
            // The first open in this process: check the file's structure before LMDB trusts it.
            if verifiesFile, let damage = TreeVerifier.damage(inFileAt: path) {
                return .failure(StorageError(code: MDB_CORRUPTED, operation: "checking '\(path)'", detail: damage))
            }
            do {
                let env = try Environment(path: path, readOnly: readOnly, initialMapSize: initialMapSize,
                                          mapSizeLimit: mapSizeLimit, expectedDatabases: expectedDatabases)
                envs[path] = WeakEnvironment(env)
                return .success(env)
            } catch let error as StorageError {
                return .failure(error)
            } catch {
                return .failure(StorageError(code: EIO, operation: "opening '\(path)'"))
            }
        }
    }
}

extension Environment {
    /// Writes a compacted copy of the newest committed version to a new file at `path` (free
    /// pages left out). Consistent while other threads and processes write: it reads one
    /// snapshot. Fails with `EEXIST` if `path` exists.
    /// The size of the memory map now (at least the file's size).
    var currentMapSize: Int { mapState.withLock { $0.mapSize } }

    func copyCompacted(to path: String) throws {
        try lmdbCheck(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)), "copying to '\(path)'")
    }

    /// Whether commits fsync before returning (LMDB's default) or leave flushing to the OS.
    /// Every open sets it, so it is written only when it changes: LMDB changes its flags without
    /// a lock, while another thread's commit may be reading them.
    func setSyncOnCommit(_ sync: Bool) {
        syncOnCommit.withLock { current in
            guard current != sync else { return }
            mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), sync ? 0 : 1)
            current = sync
        }
    }
}

/// The snapshots held in an environment's reader table (all processes), read through
/// `mdb_reader_list`, which prints one line per live slot: pid, thread and the snapshot's
/// transaction id (`-` for a slot between transactions).
struct ReaderTable {
    /// One slot in use: the process and thread that began its snapshot, and the snapshot's
    /// version (nil between transactions: a slot kept for a later snapshot pins nothing).
    struct Slot {
        var process: Int
        var thread: String
        var version: Int?
    }
    private(set) var slots: [Slot] = []

    init(_ handle: OpaquePointer) {
        var collected: [Slot] = []
        withUnsafeMutablePointer(to: &collected) { pointer in
            _ = mdb_reader_list(handle, { line, context in
                guard let line, let context else { return 0 }
                let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
                    .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                // The first line is a heading ("pid thread txnid").
                if fields.count >= 3, let process = Int(fields[0]) {
                    context.assumingMemoryBound(to: [Slot].self).pointee
                        .append(Slot(process: process, thread: fields[1], version: Int(fields[2])))
                }
                return 0
            }, pointer)
        }
        slots = collected
    }

    /// The versions of the snapshots held now.
    var snapshots: [Int] { slots.compactMap(\.version) }

    var oldestSnapshot: Int? { snapshots.min() }
}
#endif
