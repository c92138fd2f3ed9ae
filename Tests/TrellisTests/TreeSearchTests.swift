// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// `TreeSearch` finds a key by reading a read snapshot's B-tree pages in place (primary-key
/// lookups). It must answer exactly what `mdb_get` answers for every key, present or absent, in
/// trees several levels deep, for byte keys in LMDB's order and for integer keys, and give the
/// lookup back to LMDB for anything it does not read.
@Suite struct TreeSearchTests {
    let folder = TemporaryFolder()

    func makeEnvironment() throws -> Environment {
        try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
    }

    /// Deterministic value bytes for a key; now and then larger than a page (overflow pages).
    static func value(for key: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        let length = Int.random(in: 0..<40, using: &random) == 0 ? Int.random(in: 2_000...9_000, using: &random)
            : Int.random(in: 0...48, using: &random)
        return (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ key.count &* 13 &+ Int(key.first ?? 0)) }
    }

    /// A random number (in `lengths`) of random bytes (in `values`).
    static func randomBytes(_ lengths: ClosedRange<Int>, of values: ClosedRange<UInt8>,
                            using random: inout SplitMix64) -> [UInt8] {
        (0..<Int.random(in: lengths, using: &random)).map { _ in UInt8.random(in: values, using: &random) }
    }

    /// What the in-place search answers; fails the test when it gives the lookup back to LMDB.
    static func searched(_ key: [UInt8], _ root: TreeRoot, _ layout: PageLayout,
                         sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8]? {
        let answer = key.withUnsafeBytes { TreeSearch.value(forKey: $0, in: root, layout: layout) }
        #expect(answer != nil, "the search gave key \(key) back to LMDB", sourceLocation: sourceLocation)
        return answer.flatMap { $0.map(Array.init) }
    }

    /// Stores `count` integer keys with their values in database "rows": mostly runs, about one
    /// in `jumpOneIn` a far jump (keys above 2^32 too), then about one in `deleteOneIn` deleted.
    /// Returns the database, what it holds, and the largest key made.
    static func storeIntegerKeys(in environment: Environment, count: Int, jumpOneIn: Int, deleteOneIn: Int,
                                 using random: inout SplitMix64)
        throws -> (rows: DatabaseHandle, stored: [UInt64: [UInt8]], last: UInt64)
    {
        var stored = [UInt64: [UInt8]]()
        var key = UInt64.random(in: 0...1_000, using: &random)
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        for _ in 0..<count {
            key += Int.random(in: 0..<jumpOneIn, using: &random) == 0 ? UInt64.random(in: 1...(1 << 40), using: &random) : 1
            let value = Self.value(for: withUnsafeBytes(of: key) { Array($0) }, using: &random)
            try value.withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
            stored[key] = value
        }
        for deleted in stored.keys where Int.random(in: 0..<deleteOneIn, using: &random) == 0 {
            _ = try txn.delete(rows, integerKey: deleted)
            stored[deleted] = nil
        }
        try txn.commit()
        return (rows, stored, key)
    }

    static func root(of name: String, in txn: Transaction) throws -> TreeRoot {
        let handle = try #require(txn.handle)
        return try #require(DatabaseHandles.treeRoot(named: name, in: handle))
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func searchingByteKeysInPlaceGivesWhatLMDBGives(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        // Keys of 0 to 40 bytes sharing prefixes (as primary keys do: a tag, then the value),
        // some the beginning of others.
        var keys = Set<[UInt8]>()
        while keys.count < 12_000 {
            var key: [UInt8] = [UInt8.random(in: 0...2, using: &random)]
            switch Int.random(in: 0..<4, using: &random) {
            case 0: key += withUnsafeBytes(of: UInt64.random(in: 0..<20_000, using: &random).bigEndian) { Array($0) }
            case 1: key += Self.randomBytes(0...40, of: 97...100, using: &random)
            default: key += Self.randomBytes(0...12, of: 0...255, using: &random)
            }
            keys.insert(key)
        }
        var stored = [[UInt8]: [UInt8]]()
        let txn = try environment.beginWrite()
        let data = try #require(try txn.database(named: "keys", create: true))
        for key in keys {
            let value = Self.value(for: key, using: &random)
            _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(data, key: k, value: $0) } }
            stored[key] = value
        }
        try txn.commit()

        let read = try environment.beginRead()
        defer { read.abort() }
        let root = try Self.root(of: "keys", in: read)
        let layout = try #require(environment.pageLayout)
        #expect(root.depth >= 3, "the tree should have branch pages below its root")
        #expect(!root.integerKeys)
        let sorted = keys.sorted { KeyOrder.compareBytes($0.withUnsafeBytes { $0 }, $1.withUnsafeBytes { $0 }) < 0 }
        for _ in 0..<15_000 {
            let probe: [UInt8]
            switch Int.random(in: 0..<6, using: &random) {
            case 0: probe = Self.randomBytes(0...10, of: 0...3, using: &random)
            case 1: probe = Array(sorted[Int.random(in: 0..<sorted.count, using: &random)].dropLast())
            case 2: probe = sorted[Int.random(in: 0..<sorted.count, using: &random)] + [0]
            default: probe = sorted[Int.random(in: 0..<sorted.count, using: &random)]
            }
            // LMDB refuses an empty key; no key stored is empty.
            let lmdb = probe.isEmpty ? nil : probe.withUnsafeBytes { read.get(data, key: $0).map(Array.init) }
            #expect(lmdb == stored[probe])
            #expect(Self.searched(probe, root, layout) == lmdb, "key \(probe)")
        }
        // The smallest and largest keys, and keys before and after every key.
        for probe in [sorted[0], sorted[sorted.count - 1], [], [255, 255, 255]] {
            #expect(Self.searched(probe, root, layout) == stored[probe])
        }
    }

    @Test(arguments: [14, 15] as [UInt64])
    func searchingIntegerKeysInPlaceGivesWhatLMDBGives(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        let (rows, stored, key) = try Self.storeIntegerKeys(in: environment, count: 40_000, jumpOneIn: 50,
                                                            deleteOneIn: 5, using: &random)

        let read = try environment.beginRead()
        defer { read.abort() }
        let root = try Self.root(of: "rows", in: read)
        let layout = try #require(environment.pageLayout)
        #expect(root.depth >= 3)
        #expect(root.integerKeys)
        let present = Array(stored.keys)
        for _ in 0..<20_000 {
            let probe = Bool.random(using: &random) ? present[Int.random(in: 0..<present.count, using: &random)]
                : UInt64.random(in: 0...key + 10, using: &random)
            let bytes = withUnsafeBytes(of: probe) { Array($0) }
            let lmdb = read.get(rows, integerKey: probe).map(Array.init)
            #expect(lmdb == stored[probe])
            #expect(Self.searched(bytes, root, layout) == lmdb, "key \(probe)")
            #expect(read.get(rows, searchingIntegerKey: probe).map(Array.init) == lmdb)
        }
        // An integer key that is not 8 bytes long goes back to LMDB.
        let shortKey = [UInt8](repeating: 0, count: 4)
        #expect(shortKey.withUnsafeBytes { TreeSearch.value(forKey: $0, in: root, layout: layout) } == nil)
    }

    @Test func anEmptyTreeHoldsNoKey() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let data = try #require(try txn.database(named: "empty", create: true))
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        let root = try Self.root(of: "empty", in: read)
        #expect(root.page == TreeRoot.emptyTree && root.depth == 0)
        #expect(Self.searched([1, 2, 3], root, try #require(environment.pageLayout)) == nil)
        #expect([UInt8(1), 2, 3].withUnsafeBytes { read.get(data, searchingKey: $0) } == nil)
    }

    @Test func aDatabaseWithDuplicatesIsLeftToLMDB() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let data = try #require(try txn.database(named: "duplicates", create: true, sortedDuplicates: true))
        _ = try [UInt8(1)].withUnsafeBytes { k in
            try [UInt8(2)].withUnsafeBytes { try txn.put(data, key: k, value: $0) }
        }
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        let handle = try #require(read.handle)
        #expect(DatabaseHandles.treeRoot(named: "duplicates", in: handle) == nil)
        #expect([UInt8(1)].withUnsafeBytes { read.get(data, searchingKey: $0).map(Array.init) } == [2])
    }

    /// The kept roots belong to one snapshot: after a commit and a renewal the search reads the
    /// new tree, and a write transaction (whose changed pages live outside the map) uses LMDB.
    @Test func aRenewedSnapshotSearchesTheNewTreeAndWritesUseLMDB() throws {
        let environment = try makeEnvironment()
        func put(_ range: ClosedRange<UInt64>) throws {
            let txn = try environment.beginWrite()
            let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
            for key in range {
                try [UInt8(truncatingIfNeeded: key)].withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
            }
            // Inside the write: the new keys are found (by LMDB).
            #expect(txn.get(rows, searchingIntegerKey: range.upperBound).map(Array.init)
                    == [UInt8(truncatingIfNeeded: range.upperBound)])
            try txn.commit()
        }
        try put(1...3_000)
        let read = try environment.beginRead()
        defer { read.abort() }
        let rows = try #require(environment.handles.handle(named: "rows"))
        #expect(read.get(rows, searchingIntegerKey: 2_999).map(Array.init) == [UInt8(truncatingIfNeeded: 2_999)])
        #expect(read.get(rows, searchingIntegerKey: 5_000) == nil)
        try put(3_001...6_000)
        #expect(read.get(rows, searchingIntegerKey: 5_000) == nil, "the snapshot is older than the commit")
        try read.renew()
        #expect(read.get(rows, searchingIntegerKey: 5_000).map(Array.init) == [UInt8(truncatingIfNeeded: 5_000)])
    }
}
#endif
