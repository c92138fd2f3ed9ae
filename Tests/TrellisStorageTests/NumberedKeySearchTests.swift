import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Searches of numbered keys (object keys, integer primary keys): the guessed start of a page's
/// search (`PageView.lowerBound`) and the root index (RootIndex.swift), checked against a sorted
/// array kept beside the tree, with dense, sparse, tagged and mixed keys; and the root index's
/// lifetime: its own snapshot only, whatever other commits, processes or file growth do.
@Suite struct NumberedKeySearchTests {
    private static func integerKey(_ number: UInt64) -> [UInt8] { withUnsafeBytes(of: number) { Array($0) } }

    /// An integer primary key as Trellis encodes it: tag 1, then the number, big-endian.
    private static func taggedKey(_ number: UInt64, tag: UInt8 = 1) -> [UInt8] {
        [tag] + withUnsafeBytes(of: number.bigEndian) { Array($0) }
    }

    private static func lessInByteOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// Trees of every kind of numbered key, each with the sorted keys and values it holds.
    private static func makeTrees(_ environment: StorageEnvironment, random: inout SplitMix64)
        throws -> [String: [(key: [UInt8], value: [UInt8])]]
    {
        var trees: [String: [[UInt8]: [UInt8]]] = ["dense": [:], "sparse": [:], "tagged": [:], "mixed": [:]]
        for number in UInt64(0)..<20_000 where number % 7 != 3 { trees["dense"]?[integerKey(number)] = Array("d\(number)".utf8) }
        for _ in 0..<6_000 {
            let number = random.next() >> UInt64(random.below(60))
            trees["sparse"]?[integerKey(number)] = Array("s\(number)".utf8)
        }
        for number in UInt64(0)..<15_000 where number % 5 != 0 {
            trees["tagged"]?[taggedKey(number ^ (1 << 63))] = Array("t\(number)".utf8)
        }
        // Byte order with numbered keys under two tags, and keys of other lengths between them.
        for number in UInt64(0)..<4_000 {
            trees["mixed"]?[taggedKey(number * 3, tag: number % 3 == 0 ? 2 : 1)] = Array("m\(number)".utf8)
            if number % 4 == 0 { trees["mixed"]?[[1] + Array("name \(number)".utf8)] = Array("n\(number)".utf8) }
        }
        try environment.write { write in
            for (name, entries) in trees {
                try write.createTree(name, order: order(of: name))
                for (key, value) in entries { try write.put(name, key: key, value: value) }
            }
        }
        var sortedTrees: [String: [(key: [UInt8], value: [UInt8])]] = [:]
        for (name, entries) in trees {
            let integer = order(of: name) == .integer
            sortedTrees[name] = entries.sorted { a, b in
                guard integer else { return lessInByteOrder(a.key, b.key) }
                return a.key.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    < b.key.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            }.map { ($0.key, $0.value) }
        }
        return sortedTrees
    }

    private static func order(of name: String) -> KeyOrder { name == "dense" || name == "sparse" ? .integer : .bytes }

    /// A key to look for in `name`: present, absent between keys, or outside every key.
    private static func probe(_ name: String, random: inout SplitMix64, sorted: [(key: [UInt8], value: [UInt8])]) -> [UInt8] {
        if random.chance(50), let entry = sorted.randomElement(using: &random) { return entry.key }
        switch name {
        case "dense": return integerKey(UInt64(random.below(21_000)))
        case "sparse": return integerKey(random.next() >> UInt64(random.below(64)))
        case "tagged": return taggedKey(UInt64(random.below(16_000)) ^ (1 << 63))
        default:
            return random.chance(20) ? [1] + Array("name \(random.below(4_100))".utf8)
                : taggedKey(UInt64(random.below(12_500)), tag: UInt8(random.below(4)))
        }
    }

    @Test func pointReadsAndCursorSeeksAgreeWithASortedArray() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        var random = SplitMix64(seed: 3_701)
        let trees = try Self.makeTrees(environment, random: &random)
        try environment.read { read in
            for (name, sorted) in trees {
                let values = Dictionary(uniqueKeysWithValues: sorted.map { ($0.key, $0.value) })
                let access = try read.access(name)
                let indexed = try access.indexRoot()
                #expect(indexed || name == "mixed", "no root index for \(name)")
                let cursor = try read.cursor(name)
                for _ in 0..<5_000 {
                    let key = Self.probe(name, random: &random, sorted: sorted)
                    let expected = values[key]
                    #expect(try read.get(name, key: key) == expected, "\(name) key \(key)")
                    let found = try key.withUnsafeBytes { try access.searchedValue(forKey: $0, indexing: true).map { Array($0) } }
                    #expect(found == expected, "\(name) key \(key) through the root index")
                    // The cursor's seek is the lower bound: the first key not before this one.
                    let order = Self.order(of: name)
                    var low = 0, high = sorted.count
                    while low < high {
                        let middle = (low + high) / 2
                        let before = key.withUnsafeBytes { probe in sorted[middle].key.withUnsafeBytes { order.compare($0, probe) < 0 } }
                        if before { low = middle + 1 } else { high = middle }
                    }
                    let position = low < sorted.count ? low : nil
                    let moved = try key.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                    #expect(moved == (position != nil), "\(name) seek \(key)")
                    if let position, moved { #expect(Array(try cursor.key()) == sorted[position].key, "\(name) seek \(key)") }
                }
            }
        }
    }

    @Test func aRootIndexIsMadeOnlyForNumberedRootsOfReadTransactions() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("small", order: .integer)
            try write.createTree("names")
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<10 { try write.put("small", key: Self.integerKey(number), value: [1]) }
            for number in 0..<3_000 { try write.put("names", key: Array("name \(number)".utf8), value: [2]) }
            for number in UInt64(0)..<3_000 { try write.put("rows", key: Self.integerKey(number), value: [3]) }
        }
        try environment.read { read in
            let small = try read.access("small").indexRoot(), names = try read.access("names").indexRoot()
            let rows = try read.access("rows").indexRoot()
            #expect(!small)  // its root is a leaf
            #expect(!names)  // its keys are not numbers
            #expect(rows)
        }
        try environment.write { write in
            let rows = try write.access("rows").indexRoot()
            #expect(!rows)  // a write transaction's trees change
        }
    }

    /// `searchedValue(forKey:indexing:)` indexes the root on a tree's eighth search by one
    /// access, and never when the transaction may be shared between threads (`indexing` false).
    @Test func aReadTransactionIndexesTheRootOfATreeItSearchedEightTimes() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<3_000 { try write.put("rows", key: Self.integerKey(number), value: Array("v\(number)".utf8)) }
        }
        try environment.read { read in
            let access = try read.access("rows")
            for search in 1...20 {
                let number = UInt64(search * 97)
                let found = try Self.integerKey(number).withUnsafeBytes { try access.searchedValue(forKey: $0, indexing: true) }
                #expect(found.map { Array($0) } == Array("v\(number)".utf8))
                #expect((access.rootIndex != nil) == (search >= TreeAccess.searchesBeforeIndexing), "after search \(search)")
            }
        }
        try environment.read { read in
            let access = try read.access("rows")
            for search in 1...20 {
                let number = UInt64(search * 89)
                let found = try Self.integerKey(number).withUnsafeBytes { try access.searchedValue(forKey: $0, indexing: false) }
                #expect(found.map { Array($0) } == Array("v\(number)".utf8))
            }
            #expect(access.rootIndex == nil)
        }
    }

    @Test func aRootIndexServesOnlyItsOwnSnapshotWhateverIsCommittedAfter() throws {
        let directory = temporaryDirectory("root-index")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<5_000 { try write.put("rows", key: Self.integerKey(number), value: Array("old \(number)".utf8)) }
        }
        let old = try environment.beginRead()
        defer { old.end() }
        let oldAccess = try old.access("rows")
        guard try oldAccess.indexRoot() else {
            Issue.record("no root index for a two-level tree of integer keys")
            return
        }
        // Another environment on the file (as another process): every value changed, half the
        // keys deleted, 60,000 new ones (the root splits, the file grows, freed pages are reused
        // once the old snapshot ends).
        let other = try StorageEnvironment(path: path)
        try other.write { write in
            for number in UInt64(0)..<5_000 {
                if number % 2 == 0 {
                    _ = try write.delete("rows", key: Self.integerKey(number))
                } else {
                    try write.put("rows", key: Self.integerKey(number), value: Array("new \(number)".utf8))
                }
            }
            for number in UInt64(5_000)..<65_000 { try write.put("rows", key: Self.integerKey(number), value: Array("new \(number)".utf8)) }
        }
        other.close()
        // The old snapshot still reads its own commit through its index.
        for number in stride(from: UInt64(0), to: 65_000, by: 7) {
            let found = try Self.integerKey(number).withUnsafeBytes { try oldAccess.searchedValue(forKey: $0, indexing: true).map { Array($0) } }
            #expect(found == (number < 5_000 ? Array("old \(number)".utf8) : nil), "old snapshot, key \(number)")
        }
        // A new snapshot has its own access, which makes its own index.
        try environment.read { read in
            let access = try read.access("rows")
            #expect(access.rootIndex == nil)
            #expect(try access.indexRoot())
            for number in stride(from: UInt64(0), to: 65_000, by: 7) {
                let expected = number < 5_000 && number % 2 == 0 ? nil : Array("new \(number)".utf8)
                let found = try Self.integerKey(number).withUnsafeBytes { try access.searchedValue(forKey: $0, indexing: true).map { Array($0) } }
                #expect(found == expected, "new snapshot, key \(number)")
            }
        }
        old.end()
        #expect(throws: StorageError.self) {
            try Self.integerKey(1).withUnsafeBytes { _ = try oldAccess.searchedValue(forKey: $0, indexing: true) }
        }
    }
}
