// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// A snapshot that searches one tree many times (primary-key lookups) reads the tree's root
/// branch into a `RootIndex` and finds the child covering a key there. The answers must be
/// exactly `mdb_get`'s, for keys present and absent, with numbered keys of one tag (integer
/// keys, primary keys); roots whose keys do not all carry numbers under one tag are not indexed.
@Suite struct RootIndexTests {
    let folder = TemporaryFolder()

    func makeEnvironment() throws -> Environment {
        try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
    }

    /// `root` with its root branch indexed; fails the test when the root does not qualify.
    static func indexed(_ root: TreeRoot, _ layout: PageLayout,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> TreeRoot {
        let page = try #require(layout.page(numbered: root.page), sourceLocation: sourceLocation)
        var indexed = root
        indexed.index = try #require(RootIndex(page, integerKeys: root.integerKeys), sourceLocation: sourceLocation)
        return indexed
    }

    /// A primary-key index's key: tag 1 (an integer) and the number, big-endian.
    static func taggedKey(_ number: UInt64, tag: UInt8 = 1) -> [UInt8] {
        [tag] + withUnsafeBytes(of: number.bigEndian) { Array($0) }
    }

    @Test(arguments: [21, 22] as [UInt64])
    func searchingThroughAnIndexedRootGivesWhatLMDBGivesForIntegerKeys(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        let (rows, stored, key) = try TreeSearchTests.storeIntegerKeys(in: environment, count: 30_000, jumpOneIn: 40,
                                                                       deleteOneIn: 4, using: &random)

        let read = try environment.beginRead()
        defer { read.abort() }
        let layout = try #require(environment.pageLayout)
        let root = try Self.indexed(try TreeSearchTests.root(of: "rows", in: read), layout)
        #expect(root.depth >= 2)
        let present = Array(stored.keys)
        for _ in 0..<20_000 {
            let probe = Bool.random(using: &random) ? present[Int.random(in: 0..<present.count, using: &random)]
                : UInt64.random(in: 0...key + 10, using: &random)
            let lmdb = read.get(rows, integerKey: probe).map(Array.init)
            #expect(lmdb == stored[probe])
            #expect(TreeSearchTests.searched(withUnsafeBytes(of: probe) { Array($0) }, root, layout) == lmdb)
        }
        for probe in [0, UInt64.max, present.min() ?? 0, present.max() ?? 0] {
            #expect(TreeSearchTests.searched(withUnsafeBytes(of: probe) { Array($0) }, root, layout) == stored[probe])
        }
    }

    @Test(arguments: [23, 24] as [UInt64])
    func searchingThroughAnIndexedRootGivesWhatLMDBGivesForTaggedKeys(seed: UInt64) throws {
        let environment = try makeEnvironment()
        var random = SplitMix64(seed: seed)
        var stored = [[UInt8]: [UInt8]]()
        let txn = try environment.beginWrite()
        let index = try #require(try txn.database(named: "index", create: true))
        // Integer primary keys in random order, negative ones too (the sign bit flipped).
        var numbers = Set<UInt64>()
        while numbers.count < 20_000 {
            numbers.insert(UInt64.random(in: (1 << 63) - 30_000...(1 << 63) + 30_000, using: &random))
        }
        for number in numbers.shuffled(using: &random) {
            let key = Self.taggedKey(number)
            let value = withUnsafeBytes(of: number) { Array($0) }
            _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(index, key: k, value: $0) } }
            stored[key] = value
        }
        try txn.commit()

        let read = try environment.beginRead()
        defer { read.abort() }
        let layout = try #require(environment.pageLayout)
        let root = try Self.indexed(try TreeSearchTests.root(of: "index", in: read), layout)
        #expect(root.depth >= 2 && !root.integerKeys)
        let present = Array(numbers)
        for _ in 0..<20_000 {
            let probe: [UInt8]
            switch Int.random(in: 0..<8, using: &random) {
            case 0: probe = Self.taggedKey(present[Int.random(in: 0..<present.count, using: &random)], tag: 2)
            case 1: probe = Array(Self.taggedKey(present[Int.random(in: 0..<present.count, using: &random)]).dropLast())
            case 2: probe = Self.taggedKey(UInt64.random(in: 0...UInt64.max, using: &random))
            case 3: probe = Self.taggedKey(UInt64.random(in: (1 << 63) - 31_000...(1 << 63) + 31_000, using: &random))
            default: probe = Self.taggedKey(present[Int.random(in: 0..<present.count, using: &random)])
            }
            let lmdb = probe.withUnsafeBytes { read.get(index, key: $0).map(Array.init) }
            #expect(lmdb == stored[probe])
            #expect(TreeSearchTests.searched(probe, root, layout) == lmdb, "key \(probe)")
        }
    }

    @Test func rootsWhoseKeysAreNotNumberedUnderOneTagAreNotIndexed() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let mixed = try #require(try txn.database(named: "mixed", create: true))
        let texts = try #require(try txn.database(named: "texts", create: true))
        let value = [UInt8](repeating: 7, count: 40)
        for number in 0..<6_000 as Range<UInt64> {
            // Tags 1 and 2 alternate in runs: the root's keys carry both.
            let key = Self.taggedKey(number, tag: number < 3_000 ? 1 : 2)
            _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(mixed, key: k, value: $0) } }
            let text = Array("name \(number)".utf8)
            _ = try text.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(texts, key: k, value: $0) } }
        }
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        let layout = try #require(environment.pageLayout)
        for name in ["mixed", "texts"] {
            let root = try TreeSearchTests.root(of: name, in: read)
            #expect(root.depth >= 2)
            let page = try #require(layout.page(numbered: root.page))
            #expect(RootIndex(page, integerKeys: false) == nil, "\(name)")
        }
    }

    /// Keys under a tag the root's keys do not carry are not numbered like them: a few keys of
    /// tag 2 (small numbers, sorting after every tag 1 key) sit in the last leaf, and the search
    /// must still find them.
    @Test func keysUnderAnotherTagThanTheRootsAreFoundByThePageSearch() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let index = try #require(try txn.database(named: "index", create: true))
        let keys = (1_000..<6_000).map { Self.taggedKey($0) } + (0..<3).map { Self.taggedKey($0, tag: 2) }
        for key in keys {
            _ = try key.withUnsafeBytes { k in try Array(k).withUnsafeBytes { try txn.put(index, key: k, value: $0) } }
        }
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        let layout = try #require(environment.pageLayout)
        let root = try Self.indexed(try TreeSearchTests.root(of: "index", in: read), layout)
        for number in 0..<4 as Range<UInt64> {
            let key = Self.taggedKey(number, tag: 2)
            #expect(TreeSearchTests.searched(key, root, layout) == (number < 3 ? key : nil))
            #expect(TreeSearchTests.searched(Self.taggedKey(number + 1_000), root, layout) == Self.taggedKey(number + 1_000))
        }
    }

    /// A snapshot indexes a tree's root on its eighth search, forgets the index when renewed,
    /// and answers the same before and after.
    @Test func aSnapshotIndexesARootItSearchesOftenAndForgetsItWhenRenewed() throws {
        let environment = try makeEnvironment()
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        for key in 1...5_000 as ClosedRange<UInt64> {
            try withUnsafeBytes(of: key &* 3) { try txn.put(rows, integerKey: key, value: $0) }
        }
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        for search in 1...KnownRoot.searchesBeforeIndexing + 5 {
            let key = UInt64(search * 331)
            #expect(read.get(rows, searchingIntegerKey: key)?.load(as: UInt64.self) == key * 3)
            #expect(read.hasIndexedRoot(of: rows) == (search >= KnownRoot.searchesBeforeIndexing))
        }
        #expect(read.get(rows, searchingIntegerKey: 5_001) == nil)
        try read.renew()
        #expect(!read.hasIndexedRoot(of: rows))
        #expect(read.get(rows, searchingIntegerKey: 4_999)?.load(as: UInt64.self) == 4_999 * 3)
    }
}
#endif
