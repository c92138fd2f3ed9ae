// The LMDB build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=lmdb, see Package.swift).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Synchronization

/// The named-database handles of one environment, kept by LMDB's rules for them.
///
/// LMDB's rules (`mdb_dbi_open`): a handle opened in a transaction is private to that
/// transaction until it commits; a transaction can use only the handles that were published
/// before it began; and `mdb_dbi_open` must not run in two transactions of a process at once.
/// Breaking them does not fail loudly: LMDB answers `EINVAL` for a handle a transaction cannot
/// see, which reads like an empty table. Trellis keeps them like this:
/// - **Every database that exists has a handle before any transaction that may read it
///   begins.** All are opened when the file is first loaded. A transaction that begins and
///   finds more databases in the file than handles (another process created a class) ends,
///   opens the missing ones (``openMissing(in:)``) and begins again.
/// - **Handles are opened one at a time**, under ``gate``: either in a short read transaction
///   that only opens existing databases and commits, or in the write transaction, which holds
///   the gate for its whole life (writers are serialised by LMDB anyway).
/// - **A write transaction's handles are published when it commits** and forgotten when it
///   aborts (LMDB closes them then).
/// - **Databases are never deleted**, only emptied, so a handle never closes or changes meaning
///   while another transaction may hold it.
final class DatabaseHandles: Sendable {
    private struct State {
        /// Published handles by database name.
        var byName: [String: MDB_dbi] = [:]
        /// The same, by handle.
        var names: [MDB_dbi: String] = [:]
        /// The order in which each handle was published (0, 1, …).
        var order: [MDB_dbi: Int] = [:]
        /// Names in the file that are not databases LMDB can open (a damaged main database):
        /// counted as known so that they do not make every transaction start over.
        var unopenable: Set<String> = []
    }
    private let state = Mutex(State())
    /// How many names of the file are known (handles plus unopenable names); read before a
    /// transaction begins, without the lock.
    private let knownCount = Atomic<Int>(0)
    /// Serialises every `mdb_dbi_open` of the process (see the type's rules).
    let gate = HandleGate()

    /// The handle of the database named `name`, if it was published.
    func handle(named name: String) -> MDB_dbi? {
        state.withLock { $0.byName[name] }
    }

    /// The name of the database a published handle opens.
    func name(of handle: MDB_dbi) -> String? {
        state.withLock { $0.names[handle] }
    }

    /// Every published handle.
    var all: [MDB_dbi] { state.withLock { Array($0.byName.values) } }

    /// How many names are known; a transaction whose file holds more must open the rest first.
    var count: Int { knownCount.load(ordering: .acquiring) }

    /// Whether `handle` was published before the `published`-th handle, that is, whether a
    /// transaction that began when `published` handles were known can use it.
    func isVisible(_ handle: MDB_dbi, toTransactionThatKnew published: Int) -> Bool {
        state.withLock { ($0.order[handle] ?? Int.max) < published }
    }

    /// Publishes handles opened in a transaction that committed.
    func publish(_ opened: [String: MDB_dbi]) {
        guard !opened.isEmpty else { return }
        state.withLock { state in
            for (name, handle) in opened.sorted(by: { $0.value < $1.value }) where state.byName[name] == nil {
                state.order[handle] = state.byName.count
                state.byName[name] = handle
                state.names[handle] = name
            }
            knownCount.store(state.byName.count + state.unopenable.count, ordering: .releasing)
        }
    }

    private func noteUnopenable(_ names: [String]) {
        guard !names.isEmpty else { return }
        state.withLock { state in
            state.unopenable.formUnion(names)
            knownCount.store(state.byName.count + state.unopenable.count, ordering: .releasing)
        }
    }

    /// Opens a handle for every database of the file that has none, in `txn`, which must have
    /// begun while the caller held ``gate`` (so no handle was published since). Returns the
    /// handles opened; the caller publishes them once `txn` commits.
    /// `limit`: the environment's ``Environment/databaseLimit``, for the error when it is reached.
    func openMissing(in txn: OpaquePointer, limit: UInt32) throws -> [String: MDB_dbi] {
        var opened = [String: MDB_dbi]()
        var unopenable = [String]()
        for name in try Self.databaseNames(in: txn) where handle(named: name) == nil {
            if state.withLock({ $0.unopenable.contains(name) }) { continue }
            var dbi = MDB_dbi()
            let code = name.utf8.contains(0) ? MDB_INCOMPATIBLE : mdb_dbi_open(txn, name, 0, &dbi)
            switch code {
            case MDB_SUCCESS: opened[name] = dbi
            case MDB_INCOMPATIBLE, MDB_NOTFOUND: unopenable.append(name)
            case MDB_DBS_FULL:
                throw StorageError.databaseLimitReached(opening: name, limit: limit)
            default: try lmdbCheck(code, "opening the database '\(name)'")
            }
        }
        noteUnopenable(unopenable)
        return opened
    }

    /// LMDB's main database, whose keys name the named databases. Its handle is fixed
    /// (`MAIN_DBI` in LMDB's source); using it directly avoids `mdb_dbi_open`, which writes to
    /// state shared by the process's read transactions.
    static let mainDatabase: MDB_dbi = 1

    /// The names of the named databases in `txn`'s snapshot (the keys of LMDB's main database).
    static func databaseNames(in txn: OpaquePointer) throws -> [String] {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, mainDatabase, &cursor), "listing the databases")
        defer { mdb_cursor_close(cursor) }
        var names = [String]()
        var key = MDB_val()
        var value = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while code == MDB_SUCCESS {
            let bytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            names.append(String(decoding: bytes, as: UTF8.self))
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try lmdbCheck(code, "listing the databases") }
        return names
    }

    /// The record (`MDB_db`) of the database named `name` in `txn`'s snapshot, read from the main
    /// database rather than through a handle (the record LMDB itself reads for the snapshot);
    /// nil if there is no such database. Points into the map: read it at once.
    static func record(named name: String, in txn: OpaquePointer) -> UnsafeRawBufferPointer? {
        var key = MDB_val(mv_size: name.utf8.count, mv_data: nil)
        var value = MDB_val()
        let code = name.withCString { pointer in
            key.mv_data = UnsafeMutableRawPointer(mutating: pointer)
            return mdb_get(txn, mainDatabase, &key, &value)
        }
        guard code == MDB_SUCCESS, let data = value.mv_data else { return nil }
        return UnsafeRawBufferPointer(start: data, count: value.mv_size)
    }

    /// The entry count LMDB records for the database named `name` in `txn`'s snapshot, or nil if
    /// there is no such database.
    static func recordedEntryCount(named name: String, in txn: OpaquePointer) -> Int? {
        // An MDB_db record: the entry count is the 64-bit word at offset 32.
        guard let record = record(named: name, in: txn), record.count >= 40 else { return nil }
        return Int(record.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
    }

    /// The tree of the database named `name` as `txn`'s snapshot holds it, or nil if there is no
    /// such database or ``TreeSearch`` does not read its kind.
    static func treeRoot(named name: String, in txn: OpaquePointer) -> TreeRoot? {
        record(named: name, in: txn).flatMap(TreeRoot.init(record:))
    }

    /// The pages the data of `txn`'s snapshot occupies: every named database's pages (from its
    /// record in the main database) plus the main database's own. Free pages are not counted.
    static func usedPages(in txn: OpaquePointer) throws -> Int {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(txn, mainDatabase, &stat), "measuring the main database")
        var pages = 2 // the meta pages
        for count in [stat.ms_branch_pages, stat.ms_leaf_pages, stat.ms_overflow_pages] {
            pages = min(pages + min(max(count, 0), 1 << 48), 1 << 52)
        }
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(txn, mainDatabase, &cursor), "listing the databases")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while code == MDB_SUCCESS {
            // An MDB_db record: branch, leaf and overflow page counts at offsets 8, 16 and 24
            // (a damaged file's counts may be anything: capped, never trapping on overflow).
            if value.mv_size >= 48, let data = value.mv_data {
                for offset in [8, 16, 24] {
                    let count = Int(clamping: min(data.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 1 << 48))
                    pages = min(pages + count, 1 << 52)
                }
            }
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        return pages
    }

    /// How many named databases `txn`'s snapshot holds, in O(1).
    static func databaseCount(in txn: OpaquePointer) -> Int {
        var stat = MDB_stat()
        guard mdb_stat(txn, mainDatabase, &stat) == 0 else { return 0 }
        return stat.ms_entries
    }
}

extension StorageError {
    /// LMDB's `MDB_DBS_FULL`: the file holds more named databases than the environment was
    /// opened with room for (another process, or a lazily registered class, added them).
    static func databaseLimitReached(opening name: String, limit: UInt32) -> StorageError {
        StorageError(code: MDB_DBS_FULL, operation: "opening the database '\(name)'",
                     detail: "the file needs more than the \(limit) named databases this process opened it with "
                        + "room for. Close every Realm of the file and open it again: Trellis then sizes the limit "
                        + "to the file's databases")
    }
}
#endif
