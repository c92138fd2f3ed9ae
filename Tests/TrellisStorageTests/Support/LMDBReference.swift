import CLMDB
import Foundation

/// LMDB, as the reference the differential test compares TrellisStorage with. Test-only: a thin
/// wrapper whose failures trap (they are bugs of the test, not of the engine under test).
final class LMDBReference {
    private var env: OpaquePointer?
    private var txn: OpaquePointer?
    private var handles: [String: MDB_dbi] = [:]
    let directory: String

    init() {
        directory = NSTemporaryDirectory() + "lmdb-reference-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        precondition(mdb_env_create(&env) == 0)
        mdb_env_set_maxdbs(env, 128)
        mdb_env_set_mapsize(env, 1 << 32)
        let rc = mdb_env_open(env, directory, UInt32(MDB_NOSYNC | MDB_NOMETASYNC), 0o644)
        precondition(rc == 0, "mdb_env_open: \(rc)")
    }

    deinit {
        if txn != nil { mdb_txn_abort(txn) }
        mdb_env_close(env)
        try? FileManager.default.removeItem(atPath: directory)
    }

    func begin(readOnly: Bool = false) {
        precondition(txn == nil)
        precondition(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn) == 0)
    }

    func commit() {
        precondition(mdb_txn_commit(txn) == 0)
        txn = nil
    }

    func abort() {
        mdb_txn_abort(txn)
        txn = nil
        // Handles opened in an aborted transaction are closed by LMDB.
        handles.removeAll()
    }

    private func handle(_ name: String, integer: Bool = false, create: Bool = false) -> MDB_dbi? {
        if let handle = handles[name] { return handle }
        var dbi: MDB_dbi = 0
        var flags: UInt32 = create ? UInt32(MDB_CREATE) : 0
        if integer { flags |= UInt32(MDB_INTEGERKEY) }
        let rc = mdb_dbi_open(txn, name, flags, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        precondition(rc == 0, "mdb_dbi_open: \(rc)")
        handles[name] = dbi
        return dbi
    }

    func createTree(_ name: String, integer: Bool) {
        _ = handle(name, integer: integer, create: true)
    }

    func drop(_ name: String) {
        guard let dbi = handle(name) else { return }
        precondition(mdb_drop(txn, dbi, 1) == 0)
        handles[name] = nil
    }

    private func withVal<R>(_ bytes: [UInt8], _ body: (inout MDB_val) -> R) -> R {
        var copy = bytes
        return copy.withUnsafeMutableBytes { buffer in
            var value = MDB_val(mv_size: buffer.count, mv_data: buffer.baseAddress)
            return body(&value)
        }
    }

    private static func bytes(_ value: MDB_val) -> [UInt8] {
        guard let data = value.mv_data, value.mv_size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: value.mv_size))
    }

    /// Returns false when the key existed and the flags forbid overwriting (or appending before it).
    func put(_ name: String, key: [UInt8], value: [UInt8], noOverwrite: Bool = false, append: Bool = false) -> Bool {
        guard let dbi = handle(name) else { preconditionFailure("no tree \(name)") }
        var flags: UInt32 = 0
        if noOverwrite { flags |= UInt32(MDB_NOOVERWRITE) }
        if append { flags |= UInt32(MDB_APPEND) }
        let rc = withVal(key) { k in withVal(value) { v in mdb_put(txn, dbi, &k, &v, flags) } }
        if rc == MDB_KEYEXIST { return false }
        precondition(rc == 0, "mdb_put: \(rc)")
        return true
    }

    func delete(_ name: String, key: [UInt8]) -> Bool {
        guard let dbi = handle(name) else { preconditionFailure("no tree \(name)") }
        let rc = withVal(key) { k in mdb_del(txn, dbi, &k, nil) }
        if rc == MDB_NOTFOUND { return false }
        precondition(rc == 0, "mdb_del: \(rc)")
        return true
    }

    func get(_ name: String, key: [UInt8]) -> [UInt8]? {
        guard let dbi = handle(name) else { preconditionFailure("no tree \(name)") }
        var value = MDB_val()
        let rc = withVal(key) { k in mdb_get(txn, dbi, &k, &value) }
        if rc == MDB_NOTFOUND { return nil }
        precondition(rc == 0, "mdb_get: \(rc)")
        return Self.bytes(value)
    }

    func exists(_ name: String) -> Bool { handle(name) != nil }

    /// Cursor moves: returns the entry reached, or nil.
    enum Move {
        case first, last, next, previous
        case atLeast([UInt8])
    }

    final class Walk {
        let cursor: OpaquePointer?
        init(_ cursor: OpaquePointer?) { self.cursor = cursor }
        deinit { mdb_cursor_close(cursor) }
    }

    func cursor(_ name: String) -> Walk {
        guard let dbi = handle(name) else { preconditionFailure("no tree \(name)") }
        var cursor: OpaquePointer?
        precondition(mdb_cursor_open(txn, dbi, &cursor) == 0)
        return Walk(cursor)
    }

    func move(_ walk: Walk, _ move: Move) -> (key: [UInt8], value: [UInt8])? {
        var key = MDB_val(), value = MDB_val()
        let rc: Int32
        switch move {
        case .first: rc = mdb_cursor_get(walk.cursor, &key, &value, MDB_FIRST)
        case .last: rc = mdb_cursor_get(walk.cursor, &key, &value, MDB_LAST)
        case .next: rc = mdb_cursor_get(walk.cursor, &key, &value, MDB_NEXT)
        case .previous: rc = mdb_cursor_get(walk.cursor, &key, &value, MDB_PREV)
        case .atLeast(let bytes):
            var copy = bytes
            rc = copy.withUnsafeMutableBytes { buffer in
                key = MDB_val(mv_size: buffer.count, mv_data: buffer.baseAddress)
                return mdb_cursor_get(walk.cursor, &key, &value, MDB_SET_RANGE)
            }
        }
        if rc == MDB_NOTFOUND { return nil }
        precondition(rc == 0, "mdb_cursor_get: \(rc)")
        return (Self.bytes(key), Self.bytes(value))
    }

    /// Deletes keys lower <= key < upper through a cursor; returns how many.
    func deleteRange(_ name: String, from lower: [UInt8], to upper: [UInt8]?, integer: Bool) -> Int {
        let walk = cursor(name)
        var deleted = 0
        var entry = move(walk, .atLeast(lower))
        while let current = entry {
            if let upper, Self.compare(current.key, upper, integer: integer) >= 0 { break }
            precondition(mdb_cursor_del(walk.cursor, 0) == 0)
            deleted += 1
            // Re-find the place: the first key after the one deleted.
            entry = move(walk, .atLeast(current.key))
        }
        return deleted
    }

    static func compare(_ a: [UInt8], _ b: [UInt8], integer: Bool) -> Int {
        if integer {
            let x = a.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let y = b.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            return x == y ? 0 : (x < y ? -1 : 1)
        }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count - b.count
    }
}
