import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// TrellisStorage against LMDB: seeded random operations on many named trees, applied to both,
/// every read compared. `TRELLIS_STORAGE_OPS` sets the number of operations per seed and
/// `TRELLIS_STORAGE_SEEDS` the number of seeds, 1 to N (the defaults, 4 seeds, keep a debug-build
/// CI run short; see docs/RELIABILITY.md and notes for figures).
@Suite(.serialized) struct DifferentialTests {
    static let defaultOperations = 250_000
    static let seeds: [UInt64] = (1...UInt64(max(1, environmentInteger("TRELLIS_STORAGE_SEEDS", default: 4)))).map { $0 }

    @Test(arguments: seeds)
    func randomOperationsMatchLMDB(seed: UInt64) throws {
        let operations = environmentInteger("TRELLIS_STORAGE_OPS", default: Self.defaultOperations)
        var run = try DifferentialRun(seed: seed)
        try run.run(operations: operations)
        #expect(run.mismatch == nil, "\(run.mismatch ?? "")")
        #expect(run.operations >= operations)
    }

    /// The same against an encrypted file (docs/STORAGE.md, section 12), with a decrypted-page
    /// cache of 64 pages so that eviction happens under held readers. `TRELLIS_STORAGE_ENCRYPTED_OPS`
    /// sets the operations (default 60,000).
    @Test func randomOperationsOnAnEncryptedFileMatchLMDB() throws {
        let operations = environmentInteger("TRELLIS_STORAGE_ENCRYPTED_OPS", default: 60_000)
        var run = try DifferentialRun(seed: 38, key: EncryptionTests.key, cachePages: 64)
        try run.run(operations: operations)
        #expect(run.mismatch == nil, "\(run.mismatch ?? "")")
        #expect(run.operations >= operations)
    }
}

/// One seeded run. Stops at the first difference, which `mismatch` describes.
struct DifferentialRun {
    let seed: UInt64
    var random: SplitMix64
    let directory: String
    let engine: StorageEnvironment
    let lmdb = LMDBReference()
    let trees: [(name: String, integer: Bool)] = (0..<8).map { ("tree\($0)", $0 % 3 == 2) }
    var existing: Set<String> = []
    var operations = 0
    var mismatch: String?
    /// A read transaction kept across commits, and what it saw when it began.
    var heldReader: (transaction: ReadTransaction, tree: String, entries: [([UInt8], [UInt8])])?

    init(seed: UInt64, key: [UInt8]? = nil, cachePages: Int = 2048) throws {
        self.seed = seed
        random = SplitMix64(seed: seed)
        directory = temporaryDirectory("differential")
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        options.encryptionKey = key
        options.decryptedPageCacheSize = cachePages
        engine = try StorageEnvironment(path: directory + "/data.trellis", options: options)
    }

    private mutating func fail(_ what: String) {
        if mismatch == nil { mismatch = "seed \(seed), operation \(operations): \(what)" }
    }

    private mutating func key(integer: Bool) -> [UInt8] {
        if integer {
            let value: UInt64 = random.chance(5) ? random.next() : UInt64(random.below(3000))
            return withUnsafeBytes(of: value.littleEndian) { Array($0) }
        }
        if random.chance(2) { return random.bytes(1 + random.below(StorageLimits.maximumKeyLength)) }
        let alphabet: [UInt8] = [0x00, 0x01, 0x61, 0xFF]
        return (0..<(1 + random.below(6))).map { _ in alphabet[random.below(alphabet.count)] }
    }

    private mutating func value() -> [UInt8] {
        let roll = random.below(100)
        let length: Int
        switch roll {
        case ..<10: length = 0
        case ..<70: length = 1 + random.below(40)
        case ..<90: length = 41 + random.below(1500)
        case ..<98: length = 1501 + random.below(3500)
        default: length = 5000 + random.below(15000)
        }
        return random.bytes(length)
    }

    mutating func run(operations target: Int) throws {
        defer {
            heldReader = nil
            engine.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
        while operations < target && mismatch == nil {
            try transaction()
            if mismatch == nil && random.chance(20) { try compareSnapshot() }
            if mismatch == nil { try checkHeldReader() }
        }
        if mismatch == nil {
            let report = try engine.check()
            print("DifferentialTests seed \(seed): \(operations) operations, \(report.entries) entries in \(report.trees) trees, "
                + "\(report.pageCount) pages (\(report.freePages) free)")
            if report.trees != existing.count { fail("check() found \(report.trees) trees, expected \(existing.count)") }
        }
    }

    private mutating func transaction() throws {
        let write = try engine.beginWrite()
        lmdb.begin()
        var created = existing
        for tree in trees where !created.contains(tree.name) && random.chance(50) {
            try write.createTree(tree.name, order: tree.integer ? .integer : .bytes)
            lmdb.createTree(tree.name, integer: tree.integer)
            created.insert(tree.name)
        }
        if random.chance(2), let victim = created.randomElement(using: &random) {
            try write.dropTree(victim)
            lmdb.drop(victim)
            created.remove(victim)
        }
        let available = trees.filter { created.contains($0.name) }
        if !available.isEmpty {
            for _ in 0..<(1 + random.below(60)) where mismatch == nil {
                let tree = available[random.below(available.count)]
                try operation(write, tree: tree)
            }
        }
        if random.chance(10) {
            write.abort()
            lmdb.abort()
        } else {
            try write.commit()
            lmdb.commit()
            existing = created
        }
    }

    private mutating func operation(_ write: WriteTransaction, tree: (name: String, integer: Bool)) throws {
        operations += 1
        let roll = random.below(100)
        switch roll {
        case ..<35:
            var key = key(integer: tree.integer)
            let value = value()
            let modeRoll = random.below(10)
            let mode: PutMode = modeRoll < 8 ? .upsert : (modeRoll == 8 ? .noOverwrite : .append)
            if mode == .append && random.chance(70) {
                // Usually a key after the last one, as appends are.
                if let last = lmdb.move(lmdb.cursor(tree.name), .last)?.key {
                    if tree.integer {
                        let next = last.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } &+ 1 + UInt64(random.below(5))
                        key = withUnsafeBytes(of: next) { Array($0) }
                    } else if last.count < StorageLimits.maximumKeyLength {
                        key = last + [UInt8(random.below(256))]
                    }
                }
            }
            let expected = lmdb.put(tree.name, key: key, value: value, noOverwrite: mode == .noOverwrite, append: mode == .append)
            var actual = true
            do {
                try write.put(tree.name, key: key, value: value, mode: mode)
            } catch let error as StorageError where error.code == .keyExists {
                actual = false
            }
            if expected != actual { fail("put(\(key), mode \(mode)) in \(tree.name): LMDB \(expected), engine \(actual)") }
        case ..<55:
            let key = key(integer: tree.integer)
            let expected = lmdb.delete(tree.name, key: key)
            let actual = try write.delete(tree.name, key: key)
            if expected != actual { fail("delete(\(key)) in \(tree.name): LMDB \(expected), engine \(actual)") }
        case ..<75:
            let key = key(integer: tree.integer)
            let expected = lmdb.get(tree.name, key: key)
            let actual = try write.get(tree.name, key: key)
            if expected != actual { fail("get(\(key)) in \(tree.name): LMDB \(expected?.count ?? -1) bytes, engine \(actual?.count ?? -1)") }
        case ..<99:
            try walk(write.cursor(tree.name), tree: tree, steps: 1 + random.below(40),
                     changing: random.chance(40) ? write : nil)
        default:
            let lower = key(integer: tree.integer)
            let upper: [UInt8]? = random.chance(5) ? nil : key(integer: tree.integer)
            let expected = lmdb.deleteRange(tree.name, from: lower, to: upper, integer: tree.integer)
            let actual = try write.deleteRange(tree.name, from: lower, to: upper)
            if expected != actual { fail("deleteRange in \(tree.name): LMDB \(expected), engine \(actual)") }
        }
    }

    /// Walks both cursors from the same start, in the same direction, comparing every entry.
    /// With `changing`, keys are also put and deleted between steps (the current one too): both
    /// cursors then go on from where they were, to the next key after (or before) theirs.
    private mutating func walk(_ cursor: Cursor, tree: (name: String, integer: Bool), steps: Int,
                               changing write: WriteTransaction? = nil) throws {
        let reference = lmdb.cursor(tree.name)
        let forward = random.chance(50)
        var expected: (key: [UInt8], value: [UInt8])?
        var moved: Bool
        switch random.below(3) {
        case 0:
            expected = lmdb.move(reference, .first)
            moved = try cursor.first()
        case 1:
            expected = lmdb.move(reference, .last)
            moved = try cursor.last()
        default:
            let start = key(integer: tree.integer)
            expected = lmdb.move(reference, .atLeast(start))
            moved = try cursor.seek(atLeast: start)
        }
        for _ in 0..<steps {
            operations += 1
            if (expected != nil) != moved {
                fail("cursor in \(tree.name): LMDB \(expected.map { "\($0.key)" } ?? "at end"), engine \(moved ? (try? cursor.key()).map { "\($0)" } ?? "?" : "at end")")
                return
            }
            guard let entry = expected else { return }
            let key = try cursor.key(), value = try cursor.value()
            if key != entry.key || value != entry.value {
                fail("cursor in \(tree.name): LMDB at \(entry.key) (\(entry.value.count) bytes), engine at \(key) (\(value.count) bytes)")
                return
            }
            if let write, random.chance(30) {
                let target = random.chance(30) ? entry.key : self.key(integer: tree.integer)
                if random.chance(50) {
                    let newValue = self.value()
                    _ = lmdb.put(tree.name, key: target, value: newValue)
                    try write.put(tree.name, key: target, value: newValue)
                } else if lmdb.delete(tree.name, key: target) != (try write.delete(tree.name, key: target)) {
                    fail("delete during a walk in \(tree.name) differs")
                    return
                }
            }
            expected = lmdb.move(reference, forward ? .next : .previous)
            moved = forward ? try cursor.next() : try cursor.previous()
        }
    }

    /// Compares a committed tree entirely through read transactions on both engines, and
    /// sometimes keeps the engine's transaction to check later that its snapshot did not move.
    private mutating func compareSnapshot() throws {
        guard let name = existing.randomElement(using: &random) else { return }
        let read = try engine.beginRead()
        lmdb.begin(readOnly: true)
        defer { lmdb.abort() }
        let cursor = try read.cursor(name)
        let reference = lmdb.cursor(name)
        var entries: [([UInt8], [UInt8])] = []
        var expected = lmdb.move(reference, .first)
        var moved = try cursor.first()
        while true {
            operations += 1
            if (expected != nil) != moved { fail("snapshot walk of \(name): lengths differ after \(entries.count) entries"); return }
            guard let entry = expected else { break }
            let key = try cursor.key(), value = try cursor.value()
            if key != entry.key || value != entry.value { fail("snapshot walk of \(name) differs at entry \(entries.count)"); return }
            entries.append((key, value))
            expected = lmdb.move(reference, .next)
            moved = try cursor.next()
        }
        if try read.info(name)?.count != UInt64(entries.count) {
            fail("tree \(name) counts \(try read.info(name)?.count ?? 0) entries, a walk finds \(entries.count)")
        }
        if heldReader == nil && random.chance(30) {
            heldReader = (read, name, entries)
        } else {
            read.end()
        }
    }

    /// The held read transaction still sees exactly what it saw when it began.
    private mutating func checkHeldReader() throws {
        guard let held = heldReader else { return }
        let cursor = try held.transaction.cursor(held.tree)
        var index = 0
        var more = try cursor.first()
        while more {
            guard index < held.entries.count, try cursor.key() == held.entries[index].0,
                  try cursor.value() == held.entries[index].1
            else { fail("a held snapshot of \(held.tree) changed at entry \(index)"); return }
            index += 1
            more = try cursor.next()
        }
        if index != held.entries.count { fail("a held snapshot of \(held.tree) lost entries") }
        if random.chance(10) {
            held.transaction.end()
            heldReader = nil
        }
    }
}
