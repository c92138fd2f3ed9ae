// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import Foundation
import CLMDB

/// The handle of a named database inside the environment.
typealias DatabaseHandle = MDB_dbi

/// An LMDB transaction: a read snapshot, or the single write transaction of the file.
///
/// Values returned by ``get(_:key:)`` point into the memory map and are valid until the
/// transaction ends or (in a write transaction) until the next change; callers decode them at
/// once and never keep the pointer.
final class Transaction {
    let environment: Environment
    let isReadOnly: Bool
    private(set) var handle: OpaquePointer?
    /// How many database handles were published when the transaction began: it can use those
    /// (see ``DatabaseHandles``); a later one names a database its snapshot does not have.
    private var knownHandles = 0
    /// Handles opened by this write transaction (databases it created); published when it
    /// commits, closed by LMDB if it aborts.
    private var openedHandles: [String: DatabaseHandle] = [:]
    /// The first change refused because the map or the disk is full. LMDB then refuses every
    /// further change and read of the transaction, so later changes are skipped (reported as
    /// done) and the owner rolls the transaction back instead of committing it.
    private(set) var resourceFailure: StorageError?
    /// Two cursors kept for short walks and nearby lookups (``withReusableCursor(_:_:)``), the
    /// most recently used first: opening one allocates, a backlink count is a walk of one or two
    /// entries, and a run of link hops to consecutive keys steps instead of searching. Closed
    /// before the transaction ends.
    private var reusableCursors: (Cursor?, Cursor?)
    /// The leaf pages ``get(_:nearIntegerKey:)`` last landed on in two databases, the most
    /// recent first; forgotten with the reusable cursors, when the snapshot ends.
    // Unchecked: used only when the transaction is not shared between threads.
    @exclusivity(unchecked) private var nearbyLeaves: ((DatabaseHandle, CachedLeaf)?, (DatabaseHandle, CachedLeaf)?)
    /// The leaf page ``get(_:nearKey:)`` last landed on, and its database; forgotten likewise.
    @exclusivity(unchecked) private var nearbyBytesLeaf: (DatabaseHandle, CachedBytesLeaf)?
    /// The trees ``get(_:searchingKey:)`` searched in two databases (a primary-key index and its
    /// class, which lookups alternate between), and which of the two a third replaces;
    /// forgotten likewise.
    @exclusivity(unchecked) private var knownRoots: (KnownRoot?, KnownRoot?)
    @exclusivity(unchecked) private var replacesFirstKnownRoot = true
    /// The environment's write cursors (see ``WriteCursors``), used by a write transaction only.
    private let writeCursors: WriteCursors
    /// Closes the kept cursors and forgets the kept leaf pages: done whenever the snapshot ends,
    /// moves, or starts being read by several threads.
    @inline(__always)
    private func forgetKeptCursorsAndLeaves() {
        reusableCursors = (nil, nil)
        if !isReadOnly { writeCursors.closeAll() }
        nearbyLeaves = (nil, nil)
        nearbyBytesLeaf = nil
        knownRoots.0?.forget()
        knownRoots.1?.forget()
        knownRoots = (nil, nil)
    }

    /// Set when the transaction is read from several threads at once (a frozen Realm): then no
    /// cursor is shared.
    private var isShared = false

    /// Whether `code` is a full map or disk, which is remembered instead of thrown.
    private func recordResourceFailure(_ code: Int32, _ operation: String) -> Bool {
        guard code == MDB_MAP_FULL || code == ENOSPC else { return false }
        if resourceFailure == nil { resourceFailure = StorageError(code: code, operation: operation) }
        return true
    }

    /// Begins a read snapshot, or the write transaction (waiting for any other writer).
    /// `holdingGate`: the caller already took the handle gate for this write transaction, which
    /// then owns it (releases it when it ends, or here if it cannot begin).
    init(environment: Environment, readOnly: Bool, holdingGate: Bool = false) throws {
        self.environment = environment
        self.isReadOnly = readOnly
        self.writeCursors = environment.writeCursors
        if readOnly {
            (handle, knownHandles) = try Self.beginWithAllHandles(environment, readOnly: true)
        } else {
            // The write transaction holds the handle gate for its whole life (see DatabaseHandles).
            if !holdingGate { environment.handles.gate.acquire() }
            do {
                (handle, knownHandles) = try Self.beginWithAllHandles(environment, readOnly: false)
            } catch {
                environment.handles.gate.release()
                throw error
            }
        }
    }

    /// Begins a transaction in which every database of its snapshot has a handle: when the file
    /// holds databases this process has no handle for (another process created them), the
    /// transaction ends, they are opened, and it begins again.
    private static func beginWithAllHandles(_ environment: Environment, readOnly: Bool) throws
        -> (OpaquePointer, Int)
    {
        var previous = -1
        while true {
            let known = environment.handles.count
            let txn = try begin(environment, readOnly: readOnly)
            // Stop when nothing more could be opened: a damaged main database may claim more
            // entries than it holds, and waiting for them would never end.
            if DatabaseHandles.databaseCount(in: txn) <= known || known == previous { return (txn, known) }
            previous = known
            mdb_txn_abort(txn)
            environment.transactionEnded()
            try environment.openMissingDatabases(holdingGate: !readOnly)
        }
    }

    /// Begins an LMDB transaction as it comes.
    static func begin(_ environment: Environment, readOnly: Bool) throws -> OpaquePointer {
        if !readOnly { environment.clearDeadReaders() }
        environment.transactionStarting()
        var txn: OpaquePointer?
        var code = mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        if code == MDB_MAP_RESIZED {
            // Another process grew the map: adopt its size and retry once.
            environment.adoptResizedMap()
            code = mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        }
        if code == MDB_READERS_FULL, environment.clearDeadReaders() > 0 {
            code = mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        }
        guard code == 0, let txn else {
            environment.transactionEnded()
            try lmdbCheck(code, readOnly ? "beginning a read transaction" : "beginning a write transaction")
            throw StorageError(code: EINVAL, operation: "beginning a transaction")
        }
        return txn
    }

    deinit {
        forgetKeptCursorsAndLeaves()
        if let handle {
            mdb_txn_abort(handle)
            environment.transactionEnded()
            if !isReadOnly { environment.handles.gate.release() }
        }
    }

    var isActive: Bool { handle != nil }

    /// A second read snapshot of the version this read snapshot reads (see the TrellisStorage
    /// build's). LMDB begins reads on the newest version only: the new snapshot is kept when
    /// nothing was committed since this one began, else nil (a ``ThreadSafeReference`` then
    /// resolves at the newest version, as realm-core does when the reference's version is gone).
    /// Read transactions are not tied to threads here (`MDB_NOTLS`), so another thread may use it.
    func duplicate() -> Transaction? {
        guard isReadOnly, handle != nil, suspendedVersion == nil,
              let copy = try? Transaction(environment: environment, readOnly: true)
        else { return nil }
        guard copy.version == version else {
            copy.abort()
            return nil
        }
        return copy
    }

    @inline(__always)
    private var txn: OpaquePointer {
        guard let handle else { preconditionFailure("Trellis internal error: transaction used after it ended.") }
        return handle
    }

    // MARK: - Ending

    func commit() throws {
        forgetKeptCursorsAndLeaves()
        let txn = self.txn
        handle = nil
        let code = mdb_txn_commit(txn)
        environment.transactionEnded()
        if code == 0 { environment.handles.publish(openedHandles) }
        openedHandles = [:]
        if !isReadOnly { environment.handles.gate.release() }
        if code != 0 { throw StorageError(code: code, operation: "committing the write transaction") }
    }

    /// Commits, or throws the resource failure that made the transaction unusable.
    func commitUnlessFailed() throws {
        if let resourceFailure { throw resourceFailure }
        try commit()
    }

    func abort() {
        forgetKeptCursorsAndLeaves()
        guard let handle else { return }
        mdb_txn_abort(handle)
        self.handle = nil
        environment.transactionEnded()
        openedHandles = [:]
        if !isReadOnly { environment.handles.gate.release() }
    }

    /// The version a suspended snapshot read before it let go (see ``suspend()``).
    private var suspendedVersion: Int?

    /// Whether the snapshot let go of its version (``suspend()``) and must be renewed before
    /// it is read again.
    var isSuspended: Bool { suspendedVersion != nil }

    /// Lets go of the snapshot's version while keeping its reader slot, so that it pins
    /// nothing: LMDB reuses only pages freed before the oldest version a reader holds, so a
    /// snapshot kept while its thread waits for the write lock (and then writes) would keep
    /// every page the other writers free meanwhile. ``renew()`` takes the newest version again.
    func suspend() {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be suspended.")
        guard let txn = handle, suspendedVersion == nil else { return }
        forgetKeptCursorsAndLeaves()
        suspendedVersion = mdb_txn_id(txn)
        mdb_txn_reset(txn)
    }

    /// Moves a read transaction to the newest committed version (cheap: reuses the reader slot).
    func renew() throws {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be renewed.")
        forgetKeptCursorsAndLeaves()
        let txn = self.txn
        if suspendedVersion == nil { mdb_txn_reset(txn) }
        suspendedVersion = nil
        var previous = -1
        while true {
            let known = environment.handles.count
            var code = mdb_txn_renew(txn)
            if code == MDB_MAP_RESIZED {
                environment.adoptResizedMap()
                code = mdb_txn_renew(txn)
            }
            if code != 0 {
                mdb_txn_abort(txn)
                handle = nil
                environment.transactionEnded()
                throw StorageError(code: code, operation: "refreshing the read transaction")
            }
            knownHandles = known
            if DatabaseHandles.databaseCount(in: txn) <= known || known == previous { return }
            previous = known
            // Another process created databases: open them, then take the snapshot again.
            mdb_txn_reset(txn)
            try environment.openMissingDatabases(holdingGate: false)
        }
    }

    /// The version (LMDB transaction id) this transaction reads (for a suspended snapshot,
    /// the version it read before it let go).
    var version: Int { suspendedVersion ?? mdb_txn_id(txn) }

    // MARK: - Named databases

    /// The handle of a named database, creating the database in a write transaction when
    /// `create` is set. Returns nil when it does not exist and may not be created.
    ///
    /// Every database that existed when the transaction began already has a handle (see
    /// ``DatabaseHandles``); only a write transaction creating one calls `mdb_dbi_open`.
    func database(named name: String, create: Bool, integerKeys: Bool = false, sortedDuplicates: Bool = false)
        throws -> DatabaseHandle?
    {
        if let dbi = openedHandles[name] ?? environment.handles.handle(named: name) { return dbi }
        guard create, !isReadOnly else { return nil }
        var flags = UInt32(MDB_CREATE)
        if integerKeys { flags |= UInt32(MDB_INTEGERKEY) }
        if sortedDuplicates { flags |= UInt32(MDB_DUPSORT) }
        var dbi = MDB_dbi()
        // Safe: this write transaction holds the handle gate, so no other handle is being opened.
        let code = mdb_dbi_open(txn, name, flags, &dbi)
        if code == MDB_DBS_FULL { throw StorageError.databaseLimitReached(opening: name, limit: environment.databaseLimit) }
        try lmdbCheck(code, "creating the database '\(name)'")
        openedHandles[name] = dbi
        return dbi
    }

    /// The names of every named database in this snapshot.
    func databaseNames() throws -> [String] { try DatabaseHandles.databaseNames(in: txn) }

    /// The entry count LMDB records for `name` in this snapshot, read without a handle.
    func recordedEntryCount(ofDatabaseNamed name: String) -> Int? {
        DatabaseHandles.recordedEntryCount(named: name, in: txn)
    }

    /// Whether any of `databases` was opened by this transaction (and is not published yet).
    func hasOpened(anyOf databases: [DatabaseHandle]) -> Bool {
        !openedHandles.isEmpty && databases.contains { openedHandles.values.contains($0) }
    }

    /// Whether `dbi` names a database this transaction's snapshot does not have: it was created
    /// (and its handle published) after the snapshot began. LMDB answers `EINVAL` for it,
    /// which then rightly reads as empty; any other `EINVAL` is a fault, never an empty table.
    private func isNewerThanSnapshot(_ dbi: DatabaseHandle) -> Bool {
        openedHandles.values.contains(dbi) == false
            && !environment.handles.isVisible(dbi, toTransactionThatKnew: knownHandles)
    }

    /// Whether a failed read means "nothing here" rather than a fault: the database is newer
    /// than the snapshot, or this write ran out of space (LMDB then refuses every read, and
    /// the owner rolls the transaction back), or the page is damaged (it reads as absent
    /// rather than stopping the process; opening checks the file's structure first).
    private func readsAsAbsent(_ code: Int32, _ dbi: DatabaseHandle) -> Bool {
        switch code {
        case MDB_NOTFOUND, MDB_CORRUPTED, MDB_PAGE_NOTFOUND: true
        case MDB_BAD_TXN: resourceFailure != nil
        case EINVAL: isNewerThanSnapshot(dbi)
        default: false
        }
    }

    /// Stops on an LMDB error that would otherwise read as missing data.
    private func handleFault(_ code: Int32, _ dbi: DatabaseHandle, _ operation: String) -> Never {
        preconditionFailure("Trellis internal error: LMDB refused database handle \(dbi) while \(operation) in "
            + "'\(environment.path)' (\(StorageError(code: code, operation: operation).reason)); reading on would "
            + "give wrong results.")
    }

    /// Prepares a read transaction to be read from several threads at once (a frozen Realm).
    ///
    /// LMDB refreshes a named database's root in the transaction on its first use, which is
    /// the only write a read transaction makes: every open database is used once here, so
    /// concurrent reads later only read. (`MDB_NOTLS` already frees it from its thread.)
    func shareBetweenThreads() {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be shared.")
        isShared = true
        forgetKeptCursorsAndLeaves()
        for dbi in environment.handles.all { _ = entryCount(dbi) }
    }

    /// Removes every entry of a database. The database itself stays: deleting it would close
    /// its handle while other transactions may use it (see ``DatabaseHandles``).
    func empty(_ dbi: DatabaseHandle) throws {
        if resourceFailure != nil { return }
        if !isReadOnly { writeCursors.close(dbi) }
        let code = mdb_drop(txn, dbi, 0)
        if recordResourceFailure(code, "dropping a database") { return }
        try lmdbCheck(code, "dropping a database")
    }

    /// Number of entries (for a table: objects) in a database, in O(1).
    func entryCount(_ dbi: DatabaseHandle) -> Int {
        var stat = MDB_stat()
        let code = mdb_stat(txn, dbi, &stat)
        if code == 0 { return stat.ms_entries }
        if readsAsAbsent(code, dbi) { return 0 }
        handleFault(code, dbi, "counting entries")
    }

    // MARK: - Values

    /// The value stored under `key`, pointing into the map, or nil.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let code = mdb_get(txn, dbi, &k, &v)
        if code == 0 {
            guard environment.isReadable(v.mv_data, count: v.mv_size) else { return nil } // damaged: past the end
            return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        }
        if readsAsAbsent(code, dbi) { return nil }
        handleFault(code, dbi, "reading a value")
    }

    @inline(__always)
    func get(_ dbi: DatabaseHandle, integerKey: UInt64) -> UnsafeRawBufferPointer? {
        var key = Int(bitPattern: UInt(integerKey))
        return withUnsafeBytes(of: &key) { get(dbi, key: $0) }
    }

    /// One put with `flags`, through the database's write cursor; its result code.
    private func rawPut(_ dbi: DatabaseHandle, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
                        _ flags: Int32) -> Int32
    {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let txn = self.txn
        if !isReadOnly, let cursor = writeCursors.cursor(dbi, in: txn) {
            return mdb_cursor_put(cursor, &k, &v, UInt32(flags))
        }
        return mdb_put(txn, dbi, &k, &v, UInt32(flags))
    }

    func put(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
             noOverwrite: Bool = false) throws -> Bool
    {
        if resourceFailure != nil { return true }
        if noOverwrite {
            // Keys often arrive in order (counters, ObjectIds, backlinks of new objects): try the
            // end of the tree first, which needs no search. Any key not past the last one is
            // refused with MDB_KEYEXIST, and the normal put below decides.
            let appended = rawPut(dbi, key, value, MDB_APPEND | MDB_NOOVERWRITE)
            if appended == MDB_SUCCESS || recordResourceFailure(appended, "writing a value") { return true }
            if appended != MDB_KEYEXIST { try lmdbCheck(appended, "writing a value") }
        }
        let code = rawPut(dbi, key, value, noOverwrite ? MDB_NOOVERWRITE : 0)
        if code == MDB_KEYEXIST { return false }
        if recordResourceFailure(code, "writing a value") { return true }
        try lmdbCheck(code, "writing a value")
        return true
    }

    /// Writes `value` under an integer key. With `append`, the key is expected to be larger than
    /// every key in the database (a new object's key): LMDB then writes to the last page without
    /// a search and fills pages completely; a key that is not larger falls back to a normal put.
    func put(_ dbi: DatabaseHandle, integerKey: UInt64, value: UnsafeRawBufferPointer, append: Bool = false) throws {
        var key = Int(bitPattern: UInt(integerKey))
        try withUnsafeBytes(of: &key) { keyBytes in
            if append, resourceFailure == nil {
                let code = rawPut(dbi, keyBytes, value, MDB_APPEND)
                if code == MDB_SUCCESS || recordResourceFailure(code, "writing a value") { return }
                if code != MDB_KEYEXIST { try lmdbCheck(code, "writing a value") }
            }
            _ = try put(dbi, key: keyBytes, value: value)
        }
    }

    /// Deletes `key`; returns false if it was absent.
    @discardableResult
    func delete(_ dbi: DatabaseHandle, key: UnsafeRawBufferPointer) throws -> Bool {
        if resourceFailure != nil { return true }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let txn = self.txn
        var code: Int32
        if !isReadOnly, let cursor = writeCursors.cursor(dbi, in: txn) {
            // Through the database's write cursor, as every write (see ``WriteCursors``).
            var v = MDB_val()
            code = mdb_cursor_get(cursor, &k, &v, MDB_SET)
            if code == MDB_SUCCESS { code = mdb_cursor_del(cursor, 0) }
        } else {
            code = mdb_del(txn, dbi, &k, nil)
        }
        if code == MDB_NOTFOUND { return false }
        if recordResourceFailure(code, "deleting a value") { return true }
        try lmdbCheck(code, "deleting a value")
        return true
    }

    @discardableResult
    func delete(_ dbi: DatabaseHandle, integerKey: UInt64) throws -> Bool {
        var key = Int(bitPattern: UInt(integerKey))
        let keyBuffer = withUnsafeBytes(of: &key) { Array($0) }
        return try keyBuffer.withUnsafeBytes { (k) in try delete(dbi, key: k) }
    }

    /// A cursor over `dbi`. Throws for a database this snapshot does not have (created after
    /// it began); see ``existingCursor(_:)`` for reads that treat that as empty.
    func cursor(_ dbi: DatabaseHandle) throws -> Cursor {
        try Cursor(transaction: self, txn: txn, database: dbi)
    }

    /// Calls `body` with a cursor over `dbi` that the transaction keeps for the next call (a
    /// new one when the transaction is shared between threads); nil when this snapshot does not
    /// have the database. `body` must not keep the cursor.
    func withReusableCursor<R>(_ dbi: DatabaseHandle, _ body: (Cursor?) throws -> R) rethrows -> R {
        // Not in a write transaction: LMDB adjusts every open cursor of a database on each change
        // to it, so a kept cursor would slow every write.
        if isShared || !isReadOnly { return try body(existingCursor(dbi)) }
        if let cursor = reusableCursors.0, cursor.database == dbi { return try body(cursor) }
        if let cursor = reusableCursors.1, cursor.database == dbi {
            reusableCursors = (cursor, reusableCursors.0)
            return try body(cursor)
        }
        let cursor = openCursor(dbi, ownedByTransaction: true)
        if let cursor { reusableCursors = (cursor, reusableCursors.0) }
        return try body(cursor)
    }

    /// The value stored under an integer key, like ``get(_:integerKey:)``, looked up with the
    /// reused cursor of `dbi`: when the key follows the one looked up last (links made in order,
    /// list elements), the cursor steps to it instead of searching the tree.
    ///
    /// The leaf page the last such lookup landed on is kept (``CachedLeaf``): a key it holds is
    /// read from it in place, with no call into LMDB. A read snapshot's pages never change.
    func get(_ dbi: DatabaseHandle, nearIntegerKey key: UInt64) -> UnsafeRawBufferPointer? {
        if isShared || !isReadOnly { return get(dbi, integerKey: key) }
        if let (database, leaf) = nearbyLeaves.0, database == dbi, let found = leaf.value(forKey: key) { return found }
        if let (database, leaf) = nearbyLeaves.1, database == dbi, let found = leaf.value(forKey: key) { return found }
        let found = withReusableCursor(dbi) { cursor -> UnsafeRawBufferPointer?? in
            guard let cursor else { return .some(nil) }
            if let (foundKey, value) = cursor.entry(forIntegerKey: key) {
                if let leaf = CachedLeaf(holding: foundKey.baseAddress, layout: environment.pageLayout) {
                    // One leaf per database, the two used last: an owner's class and its links'.
                    nearbyLeaves = nearbyLeaves.0?.0 == dbi ? ((dbi, leaf), nearbyLeaves.1)
                        : ((dbi, leaf), nearbyLeaves.0)
                }
                return value
            }
            // Not found, or a fault: the plain lookup tells which (and stops on a fault).
            return cursor.failure == nil ? .some(nil) : nil
        }
        return found ?? get(dbi, integerKey: key)
    }

    /// The value stored under a byte key, like ``get(_:key:)``; in a read snapshot, the leaf page
    /// the last such lookup landed on is kept (``CachedBytesLeaf``), so that a key it holds is
    /// read from it in place: a collection's header and chunks, and those of the next object,
    /// sit side by side.
    func get(_ dbi: DatabaseHandle, nearKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if isShared || !isReadOnly { return get(dbi, key: key) }
        if nearbyBytesLeaf?.0 == dbi, let found = nearbyBytesLeaf?.1.value(forKey: key) { return found }
        let found = withReusableCursor(dbi) { cursor -> UnsafeRawBufferPointer?? in
            guard let cursor else { return .some(nil) }
            if let (foundKey, value) = cursor.entry(forKey: key) {
                nearbyBytesLeaf = CachedBytesLeaf(holding: foundKey.baseAddress, layout: environment.pageLayout)
                    .map { (dbi, $0) }
                return value
            }
            return cursor.failure == nil ? .some(nil) : nil
        }
        return found ?? get(dbi, key: key)
    }

    /// The value stored under `key`, like ``get(_:key:)``; in a read snapshot, found by reading
    /// the tree's pages in place (``TreeSearch``): for lookups of keys with no order to them,
    /// such as primary keys, which the kept leaf pages do not help.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, searchingKey key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if !isShared, isReadOnly, let layout = environment.pageLayout, let root = treeRoot(of: dbi, layout: layout),
           let found = TreeSearch.value(forKey: key, in: root, layout: layout)
        {
            return found
        }
        return get(dbi, key: key)
    }

    /// As ``get(_:searchingKey:)``, for an integer key.
    @inline(__always)
    func get(_ dbi: DatabaseHandle, searchingIntegerKey integerKey: UInt64) -> UnsafeRawBufferPointer? {
        var key = integerKey
        return withUnsafeBytes(of: &key) { get(dbi, searchingKey: $0) }
    }

    /// The tree of `dbi` in this snapshot, read from its record once and kept (with its root
    /// indexed once searched often, ``KnownRoot``); nil if the snapshot has no such database or
    /// it is of a kind ``TreeSearch`` does not read.
    private func treeRoot(of dbi: DatabaseHandle, layout: PageLayout) -> TreeRoot? {
        if knownRoots.0?.database == dbi { return knownRoots.0?.searched(layout: layout) }
        if knownRoots.1?.database == dbi { return knownRoots.1?.searched(layout: layout) }
        guard let name = environment.handles.name(of: dbi),
              let root = DatabaseHandles.treeRoot(named: name, in: txn)
        else { return nil }
        var known = KnownRoot(database: dbi, root: root)
        let searched = known.searched(layout: layout)
        if replacesFirstKnownRoot {
            knownRoots.0?.forget()
            knownRoots.0 = known
        } else {
            knownRoots.1?.forget()
            knownRoots.1 = known
        }
        replacesFirstKnownRoot.toggle()
        return searched
    }

    /// Whether this snapshot searched `dbi` in place often enough to index its root (for tests).
    func hasIndexedRoot(of dbi: DatabaseHandle) -> Bool {
        [knownRoots.0, knownRoots.1].contains { $0?.database == dbi && $0?.root.index != nil }
    }

    /// A cursor over `dbi`, or nil when this snapshot does not have the database (it was
    /// created later, so it is empty here). Any other failure is a fault and stops the process
    /// rather than reading as an empty database.
    func existingCursor(_ dbi: DatabaseHandle) -> Cursor? {
        openCursor(dbi, ownedByTransaction: false)
    }

    private func openCursor(_ dbi: DatabaseHandle, ownedByTransaction: Bool) -> Cursor? {
        do {
            return try Cursor(transaction: self, txn: txn, database: dbi, ownedByTransaction: ownedByTransaction)
        } catch let error as StorageError {
            if readsAsAbsent(error.code, dbi) { return nil }
            handleFault(error.code, dbi, "opening a cursor")
        } catch {
            handleFault(EINVAL, dbi, "opening a cursor")
        }
    }
}

extension Transaction {
    /// Number of named databases and keys in the unnamed main database (used to tell an empty
    /// LMDB file from a foreign one).
    func mainDatabaseEntryCount() -> Int {
        DatabaseHandles.databaseCount(in: txn)
    }
}
#endif
