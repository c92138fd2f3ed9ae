import CLMDBPeer
import Foundation
import TrellisStorage

/// The operations StorageBench times, on one engine. Keys are 8-byte big-endian integers (so
/// byte order is numeric order), values 100 bytes; everything happens in one named tree.
protocol KeyValuePeer: AnyObject {
    /// Stores every key in one write transaction (committed with a sync).
    func putAll(_ keys: [[UInt8]], value: [UInt8], append: Bool) throws
    /// Looks every key up in one read transaction; returns a checksum of what it read.
    func getAll(_ keys: [[UInt8]]) throws -> Int
    /// Walks the whole tree in key order in one read transaction; returns a checksum.
    func scan() throws -> Int
    /// One write transaction per key, each committed durably (a sync per commit).
    func commitEach(_ keys: [[UInt8]], value: [UInt8]) throws
    /// Begins and ends `count` read transactions, each reading `key`.
    func readTransactions(_ count: Int, key: [UInt8]) throws -> Int
    func close()
}

let benchTree = "bench"

/// TrellisStorage through its public API.
final class StoragePeer: KeyValuePeer {
    let environment: StorageEnvironment

    init(path: String) throws {
        environment = try StorageEnvironment(path: path)
        try environment.write { try $0.createTree(benchTree) }
    }

    /// The engine's I/O so far, counted by its I/O layer: `fdatasync` calls, `pwrite` calls and
    /// their bytes, `ftruncate` calls (growth).
    var io: StorageIO {
        guard let file = environment.file as? PosixFile else { return StorageIO(syncs: -1, writes: -1, bytes: -1, truncates: -1) }
        return StorageIO(syncs: file.syncCount, writes: file.writeCount, bytes: file.bytesWritten, truncates: file.truncateCount)
    }

    func putAll(_ keys: [[UInt8]], value: [UInt8], append: Bool) throws {
        try environment.write { transaction in
            for key in keys { try transaction.put(benchTree, key: key, value: value, mode: append ? .append : .upsert) }
        }
    }

    func getAll(_ keys: [[UInt8]]) throws -> Int {
        try environment.read { transaction in
            var sum = 0
            for key in keys {
                sum &+= try transaction.withValue(benchTree, key: key) { value in
                    guard let value, let first = value.first else { return 0 }
                    return value.count &+ Int(first)
                }
            }
            return sum
        }
    }

    func scan() throws -> Int {
        try environment.read { transaction in
            let cursor = try transaction.cursor(benchTree)
            var sum = 0
            var more = try cursor.first()
            while more {
                sum &+= try cursor.withValue { $0.count &+ Int($0.first ?? 0) }
                more = try cursor.next()
            }
            return sum
        }
    }

    func commitEach(_ keys: [[UInt8]], value: [UInt8]) throws {
        for key in keys {
            _ = try environment.write { try $0.put(benchTree, key: key, value: value) }
        }
    }

    func readTransactions(_ count: Int, key: [UInt8]) throws -> Int {
        var sum = 0
        for _ in 0..<count {
            sum &+= try environment.read { transaction in
                try transaction.withValue(benchTree, key: key) { $0?.count ?? 0 }
            }
        }
        return sum
    }

    func close() { environment.close() }
}

/// Counts of TrellisStorage's I/O calls (`StoragePeer.io`); differences of two are per stretch.
struct StorageIO: Codable {
    var syncs: Int
    var writes: Int
    var bytes: Int
    var truncates: Int

    static func - (after: StorageIO, before: StorageIO) -> StorageIO {
        StorageIO(syncs: after.syncs - before.syncs, writes: after.writes - before.writes,
                  bytes: after.bytes - before.bytes, truncates: after.truncates - before.truncates)
    }

    static func + (left: StorageIO, right: StorageIO) -> StorageIO {
        StorageIO(syncs: left.syncs + right.syncs, writes: left.writes + right.writes,
                  bytes: left.bytes + right.bytes, truncates: left.truncates + right.truncates)
    }
}

struct LMDBFailure: Error, CustomStringConvertible {
    var description: String
}

/// LMDB (the system library) with its defaults: a sync at each commit (data, then meta page).
final class LMDBPeer: KeyValuePeer {
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    init(path: String) throws {
        try check(mdb_env_create(&env), "mdb_env_create")
        mdb_env_set_maxdbs(env, 4)
        mdb_env_set_mapsize(env, 4 << 30)
        try check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR), 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        try check(mdb_dbi_open(txn, benchTree, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open")
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    private func check(_ rc: Int32, _ call: String) throws {
        if rc != 0 { throw LMDBFailure(description: "\(call): \(String(cString: mdb_strerror(rc)))") }
    }

    private func write(_ body: (OpaquePointer?) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do { try body(txn) } catch { mdb_txn_abort(txn); throw error }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    private func read<R>(_ body: (OpaquePointer?) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    private func put(_ txn: OpaquePointer?, _ key: [UInt8], _ value: [UInt8], flags: UInt32) throws {
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                try check(mdb_put(txn, dbi, &k, &v, flags), "mdb_put")
            }
        }
    }

    func putAll(_ keys: [[UInt8]], value: [UInt8], append: Bool) throws {
        try write { txn in
            for key in keys { try put(txn, key, value, flags: append ? UInt32(MDB_APPEND) : 0) }
        }
    }

    @inline(__always)
    private func get(_ txn: OpaquePointer?, _ key: [UInt8]) -> Int {
        key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            guard mdb_get(txn, dbi, &k, &v) == 0, let data = v.mv_data, v.mv_size > 0 else { return 0 }
            return v.mv_size &+ Int(data.load(as: UInt8.self))
        }
    }

    func getAll(_ keys: [[UInt8]]) throws -> Int {
        try read { txn in
            var sum = 0
            for key in keys { sum &+= get(txn, key) }
            return sum
        }
    }

    func scan() throws -> Int {
        try read { txn in
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var sum = 0
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                if let data = v.mv_data, v.mv_size > 0 { sum &+= v.mv_size &+ Int(data.load(as: UInt8.self)) }
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            return sum
        }
    }

    func commitEach(_ keys: [[UInt8]], value: [UInt8]) throws {
        for key in keys { try write { try put($0, key, value, flags: 0) } }
    }

    func readTransactions(_ count: Int, key: [UInt8]) throws -> Int {
        var sum = 0
        for _ in 0..<count { sum &+= try read { get($0, key) } }
        return sum
    }

    func close() {
        if env != nil { mdb_env_close(env) }
        env = nil
    }

    deinit { close() }
}
