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
    /// Names of databases created in this write transaction; forgotten again if it aborts.
    private var createdDatabases: [String] = []
    /// The first change refused because the map or the disk is full. LMDB then refuses every
    /// further change and read of the transaction, so later changes are skipped (reported as
    /// done) and the owner rolls the transaction back instead of committing it.
    private(set) var resourceFailure: StorageError?

    /// Whether `code` is a full map or disk, which is remembered instead of thrown.
    private func recordResourceFailure(_ code: Int32, _ operation: String) -> Bool {
        guard code == MDB_MAP_FULL || code == ENOSPC else { return false }
        if resourceFailure == nil { resourceFailure = StorageError(code: code, operation: operation) }
        return true
    }

    init(environment: Environment, readOnly: Bool) throws {
        self.environment = environment
        self.isReadOnly = readOnly
        self.handle = try Self.begin(environment, readOnly: readOnly)
    }

    private static func begin(_ environment: Environment, readOnly: Bool) throws -> OpaquePointer {
        environment.transactionStarting()
        var txn: OpaquePointer?
        var code = mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        if code == MDB_MAP_RESIZED {
            // Another process grew the map: adopt its size and retry once.
            environment.adoptResizedMap()
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
        if let handle {
            mdb_txn_abort(handle)
            environment.transactionEnded()
        }
    }

    var isActive: Bool { handle != nil }

    @inline(__always)
    private var txn: OpaquePointer {
        guard let handle else { preconditionFailure("Trellis internal error: transaction used after it ended.") }
        return handle
    }

    // MARK: - Ending

    func commit() throws {
        let txn = self.txn
        handle = nil
        let code = mdb_txn_commit(txn)
        environment.transactionEnded()
        if code != 0 {
            environment.forget(named: createdDatabases)
            createdDatabases = []
            throw StorageError(code: code, operation: "committing the write transaction")
        }
        createdDatabases = []
    }

    /// Commits, or throws the resource failure that made the transaction unusable.
    func commitUnlessFailed() throws {
        if let resourceFailure { throw resourceFailure }
        try commit()
    }

    func abort() {
        guard let handle else { return }
        mdb_txn_abort(handle)
        self.handle = nil
        environment.transactionEnded()
        environment.forget(named: createdDatabases)
        createdDatabases = []
    }

    /// Moves a read transaction to the newest committed version (cheap: reuses the reader slot).
    func renew() throws {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be renewed.")
        let txn = self.txn
        mdb_txn_reset(txn)
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
    }

    /// The version (LMDB transaction id) this transaction reads.
    var version: Int { mdb_txn_id(txn) }

    // MARK: - Named databases

    /// Opens a named database, creating it in a write transaction when `create` is set.
    /// Returns nil when it does not exist and may not be created.
    func database(named name: String, create: Bool, integerKeys: Bool = false, sortedDuplicates: Bool = false)
        throws -> DatabaseHandle?
    {
        if let dbi = environment.cachedDatabase(named: name) { return dbi }
        var flags: UInt32 = 0
        if integerKeys { flags |= UInt32(MDB_INTEGERKEY) }
        if sortedDuplicates { flags |= UInt32(MDB_DUPSORT) }
        if create && !isReadOnly { flags |= UInt32(MDB_CREATE) }
        var dbi = MDB_dbi()
        let code = mdb_dbi_open(txn, name, flags, &dbi)
        if code == MDB_NOTFOUND { return nil }
        try lmdbCheck(code, "opening the database '\(name)'")
        if isReadOnly {
            // Handles opened in a read transaction survive only if it commits; the caller commits
            // such a short-lived transaction (see ``Environment``), so remember it now.
        } else {
            createdDatabases.append(name)
        }
        environment.remember(dbi, named: name)
        return dbi
    }

    /// Prepares a read transaction to be read from several threads at once (a frozen Realm).
    ///
    /// LMDB refreshes a named database's root in the transaction on its first use, which is
    /// the only write a read transaction makes: every open database is used once here, so
    /// concurrent reads later only read. (`MDB_NOTLS` already frees it from its thread.)
    func shareBetweenThreads() {
        precondition(isReadOnly, "Trellis internal error: only read transactions can be shared.")
        for dbi in environment.openDatabases { _ = entryCount(dbi) }
    }

    /// Commits a read-only transaction so the database handles it opened stay valid.
    func finishOpeningDatabases() throws {
        precondition(isReadOnly, "Trellis internal error: finishOpeningDatabases is for read transactions.")
        let txn = self.txn
        handle = nil
        try lmdbCheck(mdb_txn_commit(txn), "keeping the database handles")
    }

    func drop(_ dbi: DatabaseHandle, deleteDatabase: Bool) throws {
        if resourceFailure != nil { return }
        let code = mdb_drop(txn, dbi, deleteDatabase ? 1 : 0)
        if recordResourceFailure(code, "dropping a database") { return }
        try lmdbCheck(code, "dropping a database")
    }

    /// Number of entries (for a table: objects) in a database, in O(1).
    func entryCount(_ dbi: DatabaseHandle) -> Int {
        var stat = MDB_stat()
        guard mdb_stat(txn, dbi, &stat) == 0 else { return 0 }
        return stat.ms_entries
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
        // EINVAL / BAD_DBI: the database was created after this snapshot began, so it is empty here.
        // MDB_CORRUPTED / MDB_PAGE_NOTFOUND: a damaged file; the value reads as absent rather than
        // stopping the process (opening checks what can be checked cheaply: header, catalog).
        return nil
    }

    @inline(__always)
    func get(_ dbi: DatabaseHandle, integerKey: UInt64) -> UnsafeRawBufferPointer? {
        var key = Int(bitPattern: UInt(integerKey))
        return withUnsafeBytes(of: &key) { get(dbi, key: $0) }
    }

    /// One `mdb_put` with `flags`; its result code.
    private func rawPut(_ dbi: DatabaseHandle, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
                        _ flags: Int32) -> Int32
    {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
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
        let code = mdb_del(txn, dbi, &k, nil)
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

    func cursor(_ dbi: DatabaseHandle) throws -> Cursor {
        try Cursor(transaction: self, txn: txn, database: dbi)
    }
}

extension Transaction {
    /// Number of named databases and keys in the unnamed main database (used to tell an empty
    /// LMDB file from a foreign one).
    func mainDatabaseEntryCount() throws -> Int {
        var dbi = MDB_dbi()
        try lmdbCheck(mdb_dbi_open(handle, nil, 0, &dbi), "opening the main database")
        return entryCount(dbi)
    }
}
