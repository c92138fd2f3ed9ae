import CLMDB
import Foundation
import TrellisTestSupport

/// Writes LMDB files the way Trellis's LMDB storage did (one file, `MDB_NOSUBDIR`, a `-lock`
/// file beside it), and reads them back through liblmdb: the reference the reader of
/// `TrellisLMDBFormat` is compared with. Test-only; failures trap (they are bugs of the test).
final class LMDBFileMaker {
    /// How a database's keys look.
    enum KeyKind: CaseIterable {
        case bytes, integer8, integer4, empty
    }

    struct DatabaseSpec {
        let name: String
        let kind: KeyKind
        var integer: Bool { kind == .integer8 || kind == .integer4 }
    }

    /// A database's contents as liblmdb reads them.
    struct Dump: Equatable {
        var integerKeys: Bool
        var entries: [([UInt8], [UInt8])]

        static func == (a: Dump, b: Dump) -> Bool {
            a.integerKeys == b.integerKeys && a.entries.count == b.entries.count
                && zip(a.entries, b.entries).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
    }

    let path: String
    private var env: OpaquePointer?

    init(path: String, pageSize: Int? = nil) {
        self.path = path
        precondition(mdb_env_create(&env) == 0)
        mdb_env_set_maxdbs(env, 1024)
        mdb_env_set_mapsize(env, 1 << 32)
        let rc = mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOSYNC), 0o644)
        precondition(rc == 0, "mdb_env_open: \(rc)")
    }

    deinit { close() }

    func close() {
        if env != nil { mdb_env_close(env) }
        env = nil
    }

    /// Runs `body` in a write transaction and commits it.
    func write(_ body: (OpaquePointer?) -> Void) {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(env, nil, 0, &txn) == 0)
        body(txn)
        precondition(mdb_txn_commit(txn) == 0)
    }

    static func open(_ txn: OpaquePointer?, _ name: String?, integer: Bool = false, duplicates: Bool = false) -> MDB_dbi {
        var dbi: MDB_dbi = 0
        var flags = UInt32(MDB_CREATE)
        if integer { flags |= UInt32(MDB_INTEGERKEY) }
        if duplicates { flags |= UInt32(MDB_DUPSORT) }
        let rc = mdb_dbi_open(txn, name, flags, &dbi)
        precondition(rc == 0, "mdb_dbi_open: \(rc)")
        return dbi
    }

    static func put(_ txn: OpaquePointer?, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) {
        var k = key, v = value
        let rc = k.withUnsafeMutableBytes { kb in
            v.withUnsafeMutableBytes { vb in
                var kv = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
                var vv = MDB_val(mv_size: vb.count, mv_data: vb.baseAddress)
                return mdb_put(txn, dbi, &kv, &vv, 0)
            }
        }
        precondition(rc == 0, "mdb_put: \(rc)")
    }

    static func delete(_ txn: OpaquePointer?, _ dbi: MDB_dbi, _ key: [UInt8]) {
        var k = key
        let rc = k.withUnsafeMutableBytes { kb in
            var kv = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
            return mdb_del(txn, dbi, &kv, nil)
        }
        precondition(rc == 0 || rc == MDB_NOTFOUND, "mdb_del: \(rc)")
    }

    /// Every entry of a database (nil: the main database), through a liblmdb cursor.
    func dump(_ name: String?) -> [([UInt8], [UInt8])] {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        precondition(mdb_dbi_open(txn, name, 0, &dbi) == 0)
        var cursor: OpaquePointer?
        precondition(mdb_cursor_open(txn, dbi, &cursor) == 0)
        defer { mdb_cursor_close(cursor) }
        var entries: [([UInt8], [UInt8])] = []
        var key = MDB_val(), value = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            entries.append((Self.bytes(key), Self.bytes(value)))
            op = MDB_NEXT
        }
        return entries
    }

    /// The flags liblmdb gives a named database.
    func flags(_ name: String) -> UInt32 {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        precondition(mdb_dbi_open(txn, name, 0, &dbi) == 0)
        var flags: UInt32 = 0
        precondition(mdb_dbi_flags(txn, dbi, &flags) == 0)
        return flags
    }

    static func bytes(_ value: MDB_val) -> [UInt8] {
        guard let data = value.mv_data, value.mv_size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: value.mv_size))
    }

    // MARK: - Seeded random files

    /// A file of `databases` named databases of every key kind (some empty, some dropped and
    /// remade), filled over several commits with inserts, overwrites and deletes; values from
    /// empty to 20 KB (overflow pages); with `mainEntries`, plain entries in the main database
    /// too. Returns the live databases.
    @discardableResult
    func fillRandomly(seed: UInt64, databases count: Int, entriesPerDatabase: Int, mainEntries: Bool = false)
        -> [DatabaseSpec]
    {
        var random = SplitMix64(seed: seed)
        var specs = (0..<count).map { index -> DatabaseSpec in
            let kind = KeyKind.allCases[random.below(KeyKind.allCases.count)]
            return DatabaseSpec(name: "db\(index).\(kind)", kind: kind)
        }
        // Names of every length and byte, sorted in byte order by LMDB.
        if count > 2 {
            specs[0] = DatabaseSpec(name: "t.Ünïcödé 🐕", kind: .integer8)
            specs[1] = DatabaseSpec(name: String(repeating: "n", count: 200), kind: .bytes)
        }
        func key(_ kind: KeyKind) -> [UInt8] {
            switch kind {
            case .integer8: return withUnsafeBytes(of: UInt64(random.below(entriesPerDatabase * 3))) { Array($0) }
            case .integer4: return withUnsafeBytes(of: UInt32(random.below(entriesPerDatabase * 3))) { Array($0) }
            case .bytes, .empty:
                // Shared prefixes, and now and then the longest key LMDB takes.
                let prefix = [UInt8(random.below(4)), UInt8(random.below(3))]
                let length = random.chance(3) ? 509 : random.below(24)
                return prefix + random.bytes(length)
            }
        }
        func value() -> [UInt8] {
            if random.chance(4) { return random.bytes(2000 + random.below(18_000)) }  // overflow pages
            if random.chance(5) { return [] }
            return random.bytes(random.below(120))
        }
        let rounds = 4
        for round in 0..<rounds {
            write { txn in
                if mainEntries {
                    let main = Self.open(txn, nil)
                    for index in 0..<20 { Self.put(txn, main, Array("plain.\(round).\(index)".utf8), value()) }
                }
                for spec in specs {
                    let dbi = Self.open(txn, spec.name, integer: spec.integer)
                    if spec.kind == .empty { continue }
                    for _ in 0..<(entriesPerDatabase / rounds) {
                        if random.chance(15) { Self.delete(txn, dbi, key(spec.kind)) } else { Self.put(txn, dbi, key(spec.kind), value()) }
                    }
                }
                // Now and then a database is dropped and made again (pages freed and reused).
                if round == 1, let victim = specs.indices.randomElement(using: &random), specs[victim].kind != .empty {
                    let dbi = Self.open(txn, specs[victim].name, integer: specs[victim].integer)
                    precondition(mdb_drop(txn, dbi, 0) == 0)
                }
            }
        }
        return specs
    }
}
