// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB
import Foundation

extension Transaction {
    /// Writes everything this transaction sees to a new LMDB file at `path`, a write
    /// transaction's uncommitted changes included (what `writeCopy` inside a write transaction
    /// copies, as Realm does): each named database with its flags, its entries appended in key
    /// order (so the copy has no free pages), then flushed. `path` must not exist.
    func copyContents(to path: String, mapSize: Int) throws {
        var created: OpaquePointer?
        try lmdbCheck(mdb_env_create(&created), "creating the environment of the copy '\(path)'")
        guard let copy = created else { throw StorageError(code: ENOMEM, operation: "creating the copy '\(path)'") }
        defer { mdb_env_close(copy) }
        let names = try databaseNames()
        try lmdbCheck(mdb_env_set_maxdbs(copy, MDB_dbi(names.count + 1)), "sizing the copy '\(path)'")
        try lmdbCheck(mdb_env_set_mapsize(copy, mapSize), "sizing the copy '\(path)'")
        // No lock file: nothing else opens the copy before it is complete.
        try lmdbCheck(mdb_env_open(copy, path, UInt32(MDB_NOSUBDIR | MDB_NOLOCK), 0o644), "creating '\(path)'")
        var writing: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(copy, nil, 0, &writing), "writing the copy '\(path)'")
        guard let target = writing else { throw StorageError(code: EINVAL, operation: "writing the copy '\(path)'") }
        do {
            for name in names { try copyDatabase(named: name, into: target, path: path) }
        } catch {
            mdb_txn_abort(target)
            throw error
        }
        try lmdbCheck(mdb_txn_commit(target), "committing the copy '\(path)'")
        try lmdbCheck(mdb_env_sync(copy, 1), "flushing the copy '\(path)'")
    }

    private func copyDatabase(named name: String, into target: OpaquePointer, path: String) throws {
        guard let txn = handle else { throw StorageError(code: EINVAL, operation: "copying '\(name)' after the transaction ended") }
        var sourceHandle = MDB_dbi()
        try lmdbCheck(mdb_dbi_open(txn, name, 0, &sourceHandle), "opening '\(name)' to copy it")
        var flags: UInt32 = 0
        try lmdbCheck(mdb_dbi_flags(txn, sourceHandle, &flags), "reading the flags of '\(name)'")
        let source = (sourceHandle, flags)
        var destination = MDB_dbi()
        try lmdbCheck(mdb_dbi_open(target, name, source.1 | UInt32(MDB_CREATE), &destination),
                      "creating '\(name)' in the copy '\(path)'")
        let append = UInt32(source.1 & UInt32(MDB_DUPSORT) != 0 ? MDB_APPENDDUP : MDB_APPEND)
        var opened: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, source.0, &opened), "reading '\(name)' to copy it")
        guard let cursor = opened else { return }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(), value = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while code == 0 {
            try lmdbCheck(mdb_put(target, destination, &key, &value, append), "copying '\(name)' to '\(path)'")
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try lmdbCheck(code, "reading '\(name)' to copy it") }
    }
}
#endif
