// The TrellisStorage build's write path (TRELLIS_STORAGE_ENGINE=trellis, the default).
#if !TRELLIS_LMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// A bulk write transaction (W1, W3build): past its first puts by name it writes each tree
/// through the tree's access (`Transaction.writeAccess`), and after a put that landed after the
/// last key of its leaf the engine first compares the next key with the last key of each page on
/// its way down (`TreeState.lastPutAtEnd`). Neither may change what is written: a long mix of
/// ascending keys, keys before them, overwrites, refused no-overwrite puts and deletes, in two
/// trees of either key order, leaves exactly what the writes say, in key order.
@Suite struct BulkWriteTransactionTests {
    let folder = TemporaryFolder()

    private func makeEnvironment() throws -> Environment {
        try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @Test(arguments: [1, 2, 3])
    func aLongMixOfPutsInOneTransactionLeavesWhatTheySay(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        var bytesModel: [[UInt8]: [UInt8]] = [:]
        var integerModel: [[UInt8]: [UInt8]] = [:]
        var next: UInt64 = 1_000
        let txn = try environment.beginWrite()
        let bytes = try #require(try txn.database(named: "bytes", create: true))
        let integers = try #require(try txn.database(named: "integers", create: true, integerKeys: true))
        for step in 0..<20_000 {
            let value = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let integerTree = Bool.random(using: &random)
            let dbi = integerTree ? integers : bytes
            func key(_ number: UInt64) -> [UInt8] {
                integerTree ? withUnsafeBytes(of: number.littleEndian) { Array($0) } : Self.bigEndian(number) + [7, 7, 7]
            }
            func put(_ key: [UInt8], noOverwrite: Bool) throws -> Bool {
                try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0, noOverwrite: noOverwrite) } }
            }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                // A new largest key (a new object's primary key or backlink): past the last one.
                next += UInt64.random(in: 1...3, using: &random)
                let k = key(next)
                let inserted = try put(k, noOverwrite: true)
                #expect(inserted == ((integerTree ? integerModel : bytesModel)[k] == nil))
                if inserted { if integerTree { integerModel[k] = value } else { bytesModel[k] = value } }
            case 55..<75:
                // Anywhere before the end, often an existing key (an overwrite).
                let k = key(UInt64.random(in: 900...next, using: &random))
                _ = try put(k, noOverwrite: false)
                if integerTree { integerModel[k] = value } else { bytesModel[k] = value }
            case 75..<85:
                // A no-overwrite put of a key that may exist (often the last one): refused when it does.
                let k = key(Bool.random(using: &random) ? next : UInt64.random(in: 900...next, using: &random))
                let inserted = try put(k, noOverwrite: true)
                #expect(inserted == ((integerTree ? integerModel : bytesModel)[k] == nil))
                if inserted { if integerTree { integerModel[k] = value } else { bytesModel[k] = value } }
            default:
                let k = key(UInt64.random(in: 900...next, using: &random))
                let deleted = try k.withUnsafeBytes { try txn.delete(dbi, key: $0) }
                #expect(deleted == ((integerTree ? integerModel : bytesModel)[k] != nil))
                if integerTree { integerModel[k] = nil } else { bytesModel[k] = nil }
            }
            if step % 5_000 == 4_999 {
                try expectTree(bytes, holds: bytesModel, in: txn, ordered: { $0.lexicographicallyPrecedes($1) })
                try expectTree(integers, holds: integerModel, in: txn, ordered: Self.integerOrder)
            }
        }
        try txn.commit()
        let read = try environment.beginRead()
        try expectTree(bytes, holds: bytesModel, in: read, ordered: { $0.lexicographicallyPrecedes($1) })
        try expectTree(integers, holds: integerModel, in: read, ordered: Self.integerOrder)
        read.abort()
    }

    private static func integerOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } < b.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    @Test func manyPutsThenAPutToATreeTheSnapshotLacksFailsNamingIt() throws {
        let environment = try makeEnvironment()
        let setUp = try environment.beginWrite()
        _ = try setUp.database(named: "rows", create: true, integerKeys: true)
        try setUp.commit()
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: false))
        let value: [UInt8] = [1, 2, 3]
        for key in UInt64(1)...40 { try value.withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0, append: true) } }
        // A handle registered by name whose tree this transaction does not have.
        let missing = environment.handles.register("missing")
        var key = UInt64(1)
        do {
            _ = try withUnsafeBytes(of: &key) { k in try value.withUnsafeBytes { try txn.put(missing, key: k, value: $0) } }
            Issue.record("a put to a tree the transaction does not have was accepted")
        } catch let error as StorageError {
            #expect("\(error)".contains("'missing'"), "\(error)")
        }
        // Created afterwards in the same transaction, it takes puts through its access.
        let created = try #require(try txn.database(named: "missing", create: true))
        for number in UInt64(1)...40 {
            var big = number.bigEndian
            _ = try withUnsafeBytes(of: &big) { k in try value.withUnsafeBytes { try txn.put(created, key: k, value: $0) } }
        }
        try txn.commit()
        let read = try environment.beginRead()
        #expect(try treeEntries(rows, read).count == 40)
        #expect(try treeEntries(created, read).count == 40)
        read.abort()
    }
}
#endif
