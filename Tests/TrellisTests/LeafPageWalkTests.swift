// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// `Cursor.appendAllIntegerKeyed` reads a class's rows a leaf page at a time, in place. It must
/// give exactly what stepping the cursor entry by entry gives: the same keys, in order, each
/// with the same value bytes, for values on the page and on overflow pages, for pages a write
/// transaction changed (outside the map), and after deletes.
@Suite struct LeafPageWalkTests {
    let folder = TemporaryFolder()

    /// Deterministic values: `key`'s value is `length` bytes derived from the key and a round.
    static func value(for key: UInt64, round: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: Int(key) &* 31 &+ $0 &* 7 &+ round) }
    }

    /// What stepping the cursor entry by entry gives.
    static func stepped(_ cursor: Cursor) -> [(UInt64, [UInt8])] {
        var entries = [(UInt64, [UInt8])]()
        var entry = cursor.first()
        while let (key, value) = entry {
            entries.append((Cursor.integerKey(key), Array(value)))
            entry = cursor.next()
        }
        return entries
    }

    /// What reading leaf pages in place gives.
    static func walked(_ cursor: Cursor) -> [(UInt64, [UInt8])] {
        walkedCountingPages(cursor).entries
    }

    static func walkedCountingPages(_ cursor: Cursor) -> (entries: [(UInt64, [UInt8])], pagesReadInPlace: Int) {
        var keys = [UInt64](), values = [UnsafeRawBufferPointer]()
        let pages = cursor.appendAllIntegerKeyed(keys: &keys, values: &values)
        return (zip(keys, values).map { ($0, Array($1)) }, pages)
    }

    static func expectSame(_ walked: [(UInt64, [UInt8])], _ stepped: [(UInt64, [UInt8])],
                           sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(walked.count == stepped.count, sourceLocation: sourceLocation)
        #expect(walked.map(\.0) == stepped.map(\.0), sourceLocation: sourceLocation)
        let differing = zip(walked, stepped).filter { $0.0.1 != $0.1.1 }.map(\.0.0)
        #expect(differing.isEmpty, "values differ for keys \(differing.prefix(5))", sourceLocation: sourceLocation)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func readingLeafPagesInPlaceGivesWhatSteppingTheCursorGives(seed: UInt64) throws {
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        var random = SplitMix64(seed: seed)
        var stored = [UInt64: [UInt8]]()
        var nextKey: UInt64 = 1
        for round in 0..<6 {
            let txn = try environment.beginWrite()
            let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
            // New rows, mostly small, some far larger than a page (overflow pages).
            for _ in 0..<Int.random(in: 200...900, using: &random) {
                let length = Int.random(in: 0..<10, using: &random) == 0 ? Int.random(in: 2_000...12_000, using: &random)
                    : Int.random(in: 0...120, using: &random)
                let value = Self.value(for: nextKey, round: round, length: length)
                try value.withUnsafeBytes { try txn.put(rows, integerKey: nextKey, value: $0, append: true) }
                stored[nextKey] = value
                nextKey += UInt64.random(in: 1...3, using: &random)
            }
            // Changes and deletes of older rows: their pages are copied out of the map.
            for key in stored.keys.sorted() where Int.random(in: 0..<12, using: &random) == 0 {
                if Bool.random(using: &random) {
                    _ = try txn.delete(rows, integerKey: key)
                    stored[key] = nil
                } else {
                    let value = Self.value(for: key, round: round + 100, length: Int.random(in: 0...300, using: &random))
                    try value.withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
                    stored[key] = value
                }
            }
            // Inside the write: changed pages live outside the map, unchanged ones in it.
            let expected = stored.keys.sorted().map { ($0, stored[$0] ?? []) }
            let inWrite = try txn.cursor(rows)
            Self.expectSame(Self.walked(inWrite), Self.stepped(inWrite))
            Self.expectSame(Self.walked(inWrite), expected)
            try txn.commit()

            // A read: every page in the map.
            let read = try environment.beginRead()
            let cursor = try read.cursor(try #require(try read.database(named: "rows", create: false, integerKeys: true)))
            // The pages a read sees are in the map: this compares the in-place reading itself.
            let first = try #require(cursor.first())
            #expect(environment.pageLayout?.page(holding: first.key.baseAddress) != nil)
            let (entries, pages) = Self.walkedCountingPages(cursor)
            // A 4 KiB leaf holds at most about 170 of these entries (8-byte keys, 8-byte node headers).
            #expect(pages >= expected.count / 170)
            Self.expectSame(entries, Self.stepped(cursor))
            Self.expectSame(Self.walked(cursor), expected)
            read.abort()
        }
    }

    /// `Transaction.get(_:nearIntegerKey:)` keeps the leaf page it landed on and answers the
    /// keys it holds from it: every answer must be LMDB's own, for present and absent keys,
    /// keys in runs and at random, values on the page and on overflow pages.
    @Test(arguments: [4, 5] as [UInt64])
    func nearbyLookupsFromTheKeptLeafPageGiveWhatLMDBGives(seed: UInt64) throws {
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        var random = SplitMix64(seed: seed)
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        // A second database (an owner's class beside its links' class): the transaction keeps a
        // leaf for each of the two databases used last, which must never answer for the other.
        let others = try #require(try txn.database(named: "others", create: true, integerKeys: true))
        var key: UInt64 = 10
        for _ in 0..<3_000 {
            let length = Int.random(in: 0..<25, using: &random) == 0 ? Int.random(in: 2_000...9_000, using: &random)
                : Int.random(in: 0...90, using: &random)
            try Self.value(for: key, round: 0, length: length).withUnsafeBytes {
                try txn.put(rows, integerKey: key, value: $0, append: true)
            }
            try Self.value(for: key, round: 1, length: length / 2).withUnsafeBytes {
                try txn.put(others, integerKey: key, value: $0, append: true)
            }
            key += Int.random(in: 0..<4, using: &random) == 0 ? UInt64.random(in: 2...5, using: &random) : 1
        }
        try txn.commit()

        let read = try environment.beginRead()
        defer { read.abort() }
        var probe: UInt64 = 0
        var found = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: probe = UInt64.random(in: 0...(key + 50), using: &random)  // anywhere, absent ones too
            case 1: probe = probe &- UInt64.random(in: 1...3, using: &random)  // back a little
            default: probe &+= 1  // runs, as links made in order give
            }
            let near = read.get(rows, nearIntegerKey: probe).map(Array.init)
            let plain = read.get(rows, integerKey: probe).map(Array.init)
            #expect(near == plain, "key \(probe)")
            if Bool.random(using: &random) {
                let other = probe &+ UInt64.random(in: 0...2, using: &random)
                #expect(read.get(others, nearIntegerKey: other).map(Array.init)
                    == read.get(others, integerKey: other).map(Array.init), "other key \(other)")
            }
            if plain != nil { found += 1 }
        }
        #expect(found > 10_000)
    }

    /// `Transaction.get(_:nearKey:)` does the same for byte keys in LMDB's default order: keys
    /// of different lengths, some the beginning of others (as a collection's header key is of
    /// its chunks' keys), compared with what LMDB's own get answers.
    @Test(arguments: [6, 7] as [UInt64])
    func nearbyByteKeyLookupsFromTheKeptLeafPageGiveWhatLMDBGives(seed: UInt64) throws {
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        var random = SplitMix64(seed: seed)
        func key(_ owner: UInt64, _ tail: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: owner.bigEndian) { Array($0) } + tail
        }
        var keys = [[UInt8]]()
        for owner in UInt64(0)..<1_500 where Int.random(in: 0..<5, using: &random) != 0 {
            keys.append(key(owner, [0]))  // a header
            for chunk in 0..<Int.random(in: 0...3, using: &random) { keys.append(key(owner, [1, 0, 0, 0, UInt8(chunk)])) }
            if Bool.random(using: &random) { keys.append(key(owner, [])) }  // the beginning of the others
        }
        let txn = try environment.beginWrite()
        let data = try #require(try txn.database(named: "bytes", create: true))
        for stored in keys {
            let length = Int.random(in: 0..<30, using: &random) == 0 ? Int.random(in: 2_000...6_000, using: &random)
                : Int.random(in: 0...60, using: &random)
            let value = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ stored.count &* 13 &+ Int(stored[stored.count / 2])) }
            _ = try stored.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.put(data, key: k, value: $0) } }
        }
        try txn.commit()

        let read = try environment.beginRead()
        defer { read.abort() }
        var index = 0
        for _ in 0..<20_000 {
            let probe: [UInt8]
            switch Int.random(in: 0..<8, using: &random) {
            case 0: probe = key(UInt64.random(in: 0...1_600, using: &random), [UInt8.random(in: 0...2, using: &random)])
            case 1: probe = Array(keys[Int.random(in: 0..<keys.count, using: &random)].dropLast())
            default:
                index = (index + 1) % keys.count
                probe = keys[index]
            }
            let near = probe.withUnsafeBytes { read.get(data, nearKey: $0).map(Array.init) }
            let plain = probe.withUnsafeBytes { read.get(data, key: $0).map(Array.init) }
            #expect(near == plain, "key \(probe)")
        }
    }

    @Test func anEmptyDatabaseGivesNothing() throws {
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        #expect(Self.walked(try read.cursor(rows)).isEmpty)
    }

    @Test func theMapIsKnownSoPagesAreReadInPlace() throws {
        // Without the map's place every page would be read through the cursor: still right,
        // but this guards the speed-up against silently switching itself off.
        let environment = try Environment(path: folder.file().path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        let txn = try environment.beginWrite()
        let rows = try #require(try txn.database(named: "rows", create: true, integerKeys: true))
        for key in UInt64(1)...500 {
            try Self.value(for: key, round: 0, length: 40).withUnsafeBytes { try txn.put(rows, integerKey: key, value: $0) }
        }
        try txn.commit()
        let read = try environment.beginRead()
        defer { read.abort() }
        let layout = try #require(environment.pageLayout)
        let cursor = try read.cursor(rows)
        let (key, value) = try #require(cursor.first())
        let page = try #require(layout.page(holding: key.baseAddress))
        var keys = [UInt64](), values = [UnsafeRawBufferPointer]()
        let last = page.appendEntries(startingAt: key, value: value, layout: layout, keys: &keys, values: &values)
        #expect(last == keys.last)
        #expect(keys.first == 1 && keys.count > 20)
    }
}
#endif
