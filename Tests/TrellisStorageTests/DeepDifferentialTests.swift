import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// TrellisStorage against LMDB on deep trees. `DifferentialTests` keeps its trees around 1,000
/// entries, where an append split of a branch at its last child went unnoticed; these seeded
/// workloads build trees of 100,000+ entries (long keys make 5-6 levels from fewer entries),
/// by long runs of appends, by random inserts and in mixed order, with small and overflow values,
/// then take them apart with range deletes that empty whole subtrees and with thinning deletes
/// that merge and rebalance leaves and branches at every level, comparing everything with LMDB
/// after each phase (walks both ways, counts, lookups) and running `check()`.
///
/// `TRELLIS_STORAGE_DEEP_SCALE` multiplies the entry counts (default 1: the CI form, tens of
/// seconds in a debug build; 10 for a long run).
@Suite(.serialized) struct DeepDifferentialTests {
    /// (seed, key shape, entries at scale 1, the depth the tree must reach).
    static let workloads: [(UInt64, DeepRun.KeyShape, Int, Int)] = [
        (101, .integer, 120_000, 3),
        (102, .long, 25_000, 5),
        (103, .short, 100_000, 3),
        (104, .long, 12_000, 4),
    ]

    @Test(arguments: workloads)
    func deepTreesMatchLMDBThroughGrowthAndTeardown(seed: UInt64, shape: DeepRun.KeyShape, entries: Int, depth: Int) throws {
        let scale = environmentInteger("TRELLIS_STORAGE_DEEP_SCALE", default: 1)
        var run = try DeepRun(seed: seed, shape: shape)
        defer { run.finish() }
        try run.run(entries: entries * scale)
        #expect(run.mismatch == nil, "\(run.mismatch ?? "")")
        #expect(run.deepest >= depth, "the workload never made a tree of depth \(depth) (only \(run.deepest))")
        print("DeepDifferentialTests seed \(seed) \(shape): \(run.operations) operations, up to \(run.largest) entries, "
            + "depth up to \(run.deepest)")
    }
}

/// One seeded deep-tree workload on one tree, applied to TrellisStorage and LMDB.
struct DeepRun {
    enum KeyShape: String, Sendable, CustomStringConvertible {
        /// 8-byte integer keys (`MDB_INTEGERKEY`).
        case integer
        /// Byte keys of 9-16 bytes.
        case short
        /// Byte keys of 200-500 bytes: a handful per page, so trees grow deep fast.
        case long

        var description: String { rawValue }
    }

    let seed: UInt64
    let shape: KeyShape
    var random: SplitMix64
    let directory: String
    let engine: StorageEnvironment
    let lmdb = LMDBReference()
    let tree = "deep"
    var operations = 0
    var mismatch: String?
    var deepest = 0
    var largest: UInt64 = 0

    init(seed: UInt64, shape: KeyShape) throws {
        self.seed = seed
        self.shape = shape
        random = SplitMix64(seed: seed)
        directory = temporaryDirectory("deep-differential")
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        engine = try StorageEnvironment(path: directory + "/data", options: options)
    }

    func finish() {
        engine.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private mutating func fail(_ what: String) {
        if mismatch == nil { mismatch = "seed \(seed) (\(shape)), operation \(operations): \(what)" }
    }

    /// The key of position `number` (keys sort as their numbers do).
    private func key(_ number: UInt64) -> [UInt8] {
        switch shape {
        case .integer:
            return withUnsafeBytes(of: number.littleEndian) { Array($0) }
        case .short:
            return Array(String(format: "%09llu", number).utf8) + Array(repeating: 0x61, count: Int(number % 8))
        case .long:
            // A shared prefix, the number, then a tail of a length that varies with it.
            return Array(repeating: 0x70, count: 180) + Array(String(format: "%09llu", number).utf8)
                + Array(repeating: UInt8(number % 251), count: 11 + Int(number % 300))
        }
    }

    private mutating func value() -> [UInt8] {
        let roll = random.below(1000)
        if roll < 8 { return random.bytes(2_001 + random.below(20_000)) } // overflow runs
        if roll < 40 { return random.bytes(random.below(1_800)) }
        return random.bytes(random.below(24))
    }

    /// Applies `body` to both engines in one transaction each.
    private mutating func transaction(_ body: (inout DeepRun, WriteTransaction) throws -> Void) throws {
        let write = try engine.beginWrite()
        lmdb.begin()
        try body(&self, write)
        try write.commit()
        lmdb.commit()
    }

    private mutating func put(_ write: WriteTransaction, _ number: UInt64, append: Bool) throws {
        operations += 1
        let key = key(number), value = value()
        let expected = lmdb.put(tree, key: key, value: value, append: append)
        var actual = true
        do {
            try write.put(tree, key: key, value: value, mode: append ? .append : .upsert)
        } catch let error as StorageError where error.code == .keyExists {
            actual = false
        }
        if expected != actual { fail("put #\(number) (append \(append)): LMDB \(expected), engine \(actual)") }
    }

    mutating func run(entries: Int) throws {
        try transaction { run, write in
            try write.createTree(run.tree, order: run.shape == .integer ? .integer : .bytes)
            run.lmdb.createTree(run.tree, integer: run.shape == .integer)
        }
        let count = UInt64(entries)
        // 1. Long appends (every split at the right edge, at every level), in commits of any size;
        //    every fifth number is left out for later.
        var next: UInt64 = 0
        while next < count && mismatch == nil {
            let batch = UInt64(1 + random.below(random.chance(20) ? 20_000 : 2_000))
            try transaction { run, write in
                for number in next..<min(count, next + batch) where number % 5 != 0 {
                    try run.put(write, number * 4, append: true)
                }
            }
            next += batch
        }
        try compare("after the appends")
        // 2. Random inserts between existing keys (splits in the middle of every level) and
        //    upserts of existing ones.
        for _ in 0..<(entries / 4000 + 1) where mismatch == nil {
            try transaction { run, write in
                for _ in 0..<1000 {
                    let number = UInt64(run.random.below(entries)) * 4 + (run.random.chance(80) ? UInt64(1 + run.random.below(3)) : 0)
                    try run.put(write, number, append: false)
                }
            }
        }
        try compare("after random inserts")
        // 3. Range deletes of random spans (whole subtrees, partial leaves at both ends).
        for _ in 0..<12 where mismatch == nil {
            let lower = UInt64(random.below(entries)) * 4
            let span = UInt64(1 + random.below(max(1, entries / (random.chance(30) ? 3 : 40)))) * 4
            try deleteRange(from: lower, to: random.chance(10) ? nil : lower + span)
        }
        try compare("after range deletes")
        // 4. Thinning: delete most keys spread over the tree (underfull leaves and branches
        //    merge or borrow, level after level), then the tree is refilled and emptied.
        for keep in [2, 3, 5] where mismatch == nil {
            try thin(keepingOneIn: keep)
            try compare("after thinning to one in \(keep)")
        }
        next = 0
        while next < count / 2 && mismatch == nil {
            let batch = UInt64(1 + random.below(5_000))
            try transaction { run, write in
                for number in next..<min(count / 2, next + batch) where number % 2 == 1 {
                    try run.put(write, number * 4 + 2, append: false)
                }
            }
            next += batch
        }
        try compare("after refilling")
        while mismatch == nil {
            let remaining = try engine.read { try $0.info(tree)?.count ?? 0 }
            if remaining == 0 { break }
            let lower = UInt64(random.below(entries)) * 4
            try deleteRange(from: random.chance(50) ? 0 : lower, to: lower + UInt64(1 + random.below(entries / 3 + 1)) * 4)
            if random.chance(30) { try compare("while emptying") }
        }
        try compare("after emptying")
    }

    private mutating func deleteRange(from lower: UInt64, to upper: UInt64?) throws {
        try transaction { run, write in
            run.operations += 1
            let low = run.key(lower), high = upper.map { run.key($0) }
            let expected = run.lmdb.deleteRange(run.tree, from: low, to: high, integer: run.shape == .integer)
            let actual = try write.deleteRange(run.tree, from: low, to: high)
            if expected != actual { run.fail("deleteRange(#\(lower), #\(upper.map { "\($0)" } ?? "end")): LMDB \(expected), engine \(actual)") }
        }
    }

    /// Deletes every key but one in `keep` (by position), in a few commits.
    private mutating func thin(keepingOneIn keep: Int) throws {
        var keys: [[UInt8]] = []
        try engine.read { read in
            let cursor = try read.cursor(tree)
            var more = try cursor.first()
            var position = 0
            while more {
                if position % keep != 0 { keys.append(try cursor.key()) }
                position += 1
                more = try cursor.next()
            }
        }
        var start = 0
        while start < keys.count && mismatch == nil {
            let end = min(keys.count, start + 1 + random.below(keys.count / 3 + 1))
            try transaction { run, write in
                for key in keys[start..<end] {
                    run.operations += 1
                    if run.lmdb.delete(run.tree, key: key) != (try write.delete(run.tree, key: key)) {
                        run.fail("delete during thinning differs")
                        return
                    }
                }
            }
            start = end
        }
    }

    /// Compares the whole tree through read transactions on both: a walk forwards, a walk
    /// backwards, the count, a thousand lookups (present and absent); then `check()`.
    private mutating func compare(_ phase: String) throws {
        guard mismatch == nil else { return }
        let read = try engine.beginRead()
        defer { read.end() }
        lmdb.begin(readOnly: true)
        defer { lmdb.abort() }
        let info = try read.info(tree)
        deepest = max(deepest, info?.depth ?? 0)
        largest = max(largest, info?.count ?? 0)
        for forward in [true, false] {
            let cursor = try read.cursor(tree)
            let reference = lmdb.cursor(tree)
            var expected = lmdb.move(reference, forward ? .first : .last)
            var moved = forward ? try cursor.first() : try cursor.last()
            var seen: UInt64 = 0
            while true {
                operations += 1
                if (expected != nil) != moved { fail("\(phase): walk (forward \(forward)) ends differently after \(seen)"); return }
                guard let entry = expected else { break }
                if try cursor.key() != entry.key || cursor.value() != entry.value {
                    fail("\(phase): walk (forward \(forward)) differs at entry \(seen)")
                    return
                }
                seen += 1
                expected = lmdb.move(reference, forward ? .next : .previous)
                moved = forward ? try cursor.next() : try cursor.previous()
            }
            if seen != (info?.count ?? 0) { fail("\(phase): tree counts \(info?.count ?? 0), walk finds \(seen)"); return }
        }
        for _ in 0..<1000 {
            operations += 1
            let key = key(UInt64(random.below(Int(largest) * 4 + 8)))
            if try read.get(tree, key: key) != lmdb.get(tree, key: key) { fail("\(phase): get differs"); return }
        }
        do {
            _ = try engine.check()
        } catch {
            fail("\(phase): check() failed: \(error)")
        }
    }
}
