// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// A write transaction writes through one kept cursor per database (`WriteCursors`), which
/// LMDB lets append without a search. Every mix of appends, inserts past the cursor, overwrites,
/// deletes and emptying must leave exactly what the writes say, in key order, in a tree the
/// structure check accepts; and no cursor may outlive its transaction.
@Suite struct WriteCursorTests {
    let folder = TemporaryFolder()

    private func makeEnvironment() throws -> Environment {
        try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
    }

    /// LMDB's byte order for keys of one database (shorter first on a common prefix).
    private static func ordered(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// Checks `dbi` against `model` in the open transaction and after commit (walk, `get` for
    /// every key, the file's structure check).
    private func check(_ environment: Environment, _ dbi: DatabaseHandle, _ model: [[UInt8]: [UInt8]],
                       _ txn: Transaction, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectTree(dbi, holds: model, in: txn, ordered: Self.ordered, sourceLocation: sourceLocation)
    }

    @Test(arguments: [1, 2, 3])
    func randomWritesInOneTransactionLeaveWhatTheySay(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        var next: UInt64 = 1_000
        let txn = try environment.beginWrite()
        let dbi = try #require(try txn.database(named: "entries", create: true))
        for step in 0..<30_000 {
            let value = TreeSearchTests.randomBytes(0...40, of: 0...255, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                // A new largest key, as new objects' keys are: the append path.
                next += UInt64.random(in: 1...3, using: &random)
                let key = Self.bigEndian(next)
                let inserted = try key.withUnsafeBytes { k in
                    try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0, noOverwrite: true) }
                }
                // Refused only for a key written past the appends before (the next case).
                #expect(inserted == (model[key] == nil))
                if inserted { model[key] = value }
            case 45..<60:
                // Keys past the last append, written without it: they land after the cursor.
                let key = Self.bigEndian(next + UInt64.random(in: 1...50, using: &random))
                _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0) } }
                model[key] = value
            case 60..<75:
                // Anywhere (often an existing key: an overwrite), with another key length.
                let key = Self.bigEndian(UInt64.random(in: 900...next + 60, using: &random))
                    + (Bool.random(using: &random) ? [] : [UInt8.random(in: 0...255, using: &random)])
                _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0) } }
                model[key] = value
            case 75..<77:
                // A no-overwrite put of a key that may exist: refused when it does.
                let key = Self.bigEndian(UInt64.random(in: 900...next, using: &random))
                let inserted = try key.withUnsafeBytes { k in
                    try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0, noOverwrite: true) }
                }
                #expect(inserted == (model[key] == nil))
                if inserted { model[key] = value }
            case 77..<99:
                let key = Bool.random(using: &random) && !model.isEmpty
                    ? model.keys.randomElement(using: &random) ?? []
                    : Self.bigEndian(UInt64.random(in: 900...next + 60, using: &random))
                let deleted = try key.withUnsafeBytes { try txn.delete(dbi, key: $0) }
                #expect(deleted == (model[key] != nil))
                model[key] = nil
            default:
                if Int.random(in: 0..<20, using: &random) == 0 {
                    try txn.empty(dbi)
                    model = [:]
                }
            }
            if step % 5_000 == 4_999 { try check(environment, dbi, model, txn) }
        }
        try check(environment, dbi, model, txn)
        try txn.commit()
        #expect(environment.writeCursors.openCount == 0)
        let read = try environment.beginRead()
        try check(environment, dbi, model, read)
        read.abort()
        #expect(TreeVerifier.damage(inFileAt: folder.file().path) == nil)
    }

    @Test func anAppendAfterKeysWrittenPastItStaysInOrder() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        let value = [UInt8](repeating: 7, count: 40)
        var expected: [UInt64] = []
        func put(_ key: UInt64, append: Bool) throws {
            try value.withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0, append: append) }
            expected.append(key)
        }
        for key in UInt64(1)...300 { try put(key, append: true) }  // the cursor ends on the last key
        for key in UInt64(301)...900 { try put(key, append: false) }  // keys after it, splitting its page
        try put(5_000, append: true)
        try put(950, append: true)  // not past the last key: written in place instead
        for key in UInt64(5_001)...5_400 { try put(key, append: true) }
        try txn.commit()
        let read = try environment.beginRead()
        let keys = try treeEntries(rows, read).map { $0.0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        #expect(keys == expected.sorted())
        for key in expected { #expect(read.get(rows, integerKey: key).map(Array.init) == value) }
        read.abort()
        #expect(TreeVerifier.damage(inFileAt: folder.file().path) == nil)
    }

    @Test func cursorsCloseWhenTransactionsCommitOrAbort() throws {
        let environment = try makeEnvironment()
        var committed: [UInt64] = []
        for round in UInt64(0)..<40 {
            let txn = try environment.beginWrite()
            let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
            let other = try #require(try txn.database(named: "other", create: true))
            for key in (round * 10)..<(round * 10 + 10) {
                try [UInt8(truncatingIfNeeded: key)].withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
                try Self.bigEndian(key).withUnsafeBytes { k in
                    _ = try [1].withUnsafeBytes { try txn.put(other, key: k, value: $0) }
                }
            }
            #expect(environment.writeCursors.openCount == 2)  // 20 writes: past those made without
            if round % 3 == 0 {
                txn.abort()
            } else {
                try txn.commit()
                committed += Array((round * 10)..<(round * 10 + 10))
            }
            #expect(environment.writeCursors.openCount == 0)
        }
        let read = try environment.beginRead()
        let rows = try #require(try read.database(named: "rows", create: false))
        let keys = try treeEntries(rows, read).map { $0.0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        #expect(keys == committed)
        read.abort()
    }

    @Test func aSmallTransactionOpensNoCursor() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        let other = try #require(try txn.database(named: "other", create: true, integerKeys: true))
        for key in 0..<WriteCursors.writesBeforeCursors {
            try [1].withUnsafeBytes { try txn.put(rows, integerKey: UInt64(key), value: $0) }
        }
        #expect(environment.writeCursors.openCount == 0)
        try [1].withUnsafeBytes { try txn.put(rows, integerKey: 99, value: $0) }
        #expect(environment.writeCursors.openCount == 1)
        try txn.empty(rows)  // closes the cursor of the database it empties, and only that one
        try [1].withUnsafeBytes { try txn.put(other, integerKey: 1, value: $0) }
        #expect(environment.writeCursors.openCount == 1)
        try [1].withUnsafeBytes { try txn.put(rows, integerKey: 5, value: $0) }
        #expect(environment.writeCursors.openCount == 2)
        try txn.commit()
        #expect(environment.writeCursors.openCount == 0)
        // The count starts again with each transaction.
        let next = try environment.beginWrite()
        for key in 0..<WriteCursors.writesBeforeCursors {
            try [2].withUnsafeBytes { try next.put(other, integerKey: UInt64(key), value: $0) }
        }
        #expect(environment.writeCursors.openCount == 0)
        try next.commit()
        let read = try environment.beginRead()
        #expect(try treeEntries(rows, read).count == 1)
        #expect(try treeEntries(other, read).count == WriteCursors.writesBeforeCursors)
        read.abort()
    }
}
#endif
