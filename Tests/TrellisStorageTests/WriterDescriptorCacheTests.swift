import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Write transactions find their trees through the environment's descriptor cache, and a commit
/// moves the cache to the catalog it published (the trees it created, changed or dropped, every
/// other tree as it was). Whatever the cache holds, every transaction must see its own commit's
/// trees: checked against a model over random creates, puts, deletes, clears, drops and aborted
/// transactions, with two environments on one file taking turns (each one's commits change the
/// catalog under the other's cache).
@Suite struct WriterDescriptorCacheTests {
    private typealias Model = [String: (order: KeyOrder, entries: [[UInt8]: [UInt8]])]

    private static let names = (0..<6).map { "tree\($0)" }

    /// Every tree of the model is seen with its order, count and a value; every other name is absent.
    private static func expectMatches(_ reading: some TreeReading, _ info: (String) throws -> TreeInfo?, _ model: Model,
                                      _ label: String) throws {
        for name in names {
            guard let tree = model[name] else {
                #expect(try info(name) == nil, "\(label): \(name) should be absent")
                continue
            }
            let seen = try info(name)
            #expect(seen?.order == tree.order && seen?.count == UInt64(tree.entries.count),
                    "\(label): \(name) is \(String(describing: seen)), the model has \(tree.entries.count) entries")
            if let (key, value) = tree.entries.min(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                #expect(try reading.get(name, key: key) == value, "\(label): \(name)'s value")
            }
        }
    }

    @Test(arguments: [UInt64(3701), 3702])
    func transactionsSeeTheTreesTheLastCommitLeftAcrossTwoEnvironments(seed: UInt64) throws {
        let directory = temporaryDirectory("writer-descriptors-\(seed)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let path = directory + "/cache.db"
        let first = try StorageEnvironment(path: path, options: options)
        defer { first.close() }
        let second = try StorageEnvironment(path: path, options: options)
        defer { second.close() }
        var random = SplitMix64(seed: seed)
        var model: Model = [:]
        for round in 0..<400 {
            // Mostly the same environment for a while (its cache then serves its lookups), at
            // times the other one.
            let environment = (round / 7) % 3 == 2 ? second : first
            let write = try environment.beginWrite()
            try Self.expectMatches(write, write.info, model, "round \(round), write before")
            var changed = model
            for _ in 0..<(1 + random.below(4)) {
                let name = Self.names[random.below(Self.names.count)]
                switch random.below(10) {
                case 0:
                    try write.dropTree(name)
                    changed[name] = nil
                case 1:
                    try write.createTree(name, order: random.chance(50) ? .bytes : .integer)
                    if changed[name] == nil { changed[name] = (try write.info(name)?.order ?? .bytes, [:]) }
                case 2 where changed[name] != nil:
                    try write.clearTree(name)
                    changed[name]?.entries = [:]
                case 3 where changed[name] != nil:
                    if let key = changed[name]?.entries.keys.first {
                        try write.delete(name, key: key)
                        changed[name]?.entries[key] = nil
                    }
                default:
                    if changed[name] == nil {
                        try write.createTree(name, order: .integer)
                        changed[name] = (.integer, [:])
                    }
                    for _ in 0..<(1 + random.below(30)) {
                        let key = withUnsafeBytes(of: UInt64(random.below(500)).bigEndian) { Array($0) }
                        let value = random.bytes(random.below(60))
                        try write.put(name, key: key, value: value)
                        changed[name]?.entries[key] = value
                    }
                }
            }
            try Self.expectMatches(write, write.info, changed, "round \(round), write after its changes")
            if random.chance(15) {
                write.abort()
            } else {
                try write.commit()
                model = changed
            }
            for (label, reader) in [("first", first), ("second", second)] {
                try reader.read { read in try Self.expectMatches(read, read.info, model, "round \(round), \(label) reads") }
            }
        }
        _ = try first.check()
    }

    /// A transaction touching more trees than its short list holds (TransactionTrees: a list
    /// searched in order up to 16, then also a dictionary) finds each one, through creates,
    /// drops and re-creates that cross that bound both ways.
    @Test func aTransactionFindsEachOfManyTreesItTouched() throws {
        let directory = temporaryDirectory("writer-many-trees")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = try StorageEnvironment(path: directory + "/many.db")
        defer { environment.close() }
        var random = SplitMix64(seed: 3703)
        var model: [String: Set<UInt8>] = [:]
        let names = (0..<40).map { "many\($0)" }
        try environment.write { write in
            for step in 0..<600 {
                // Mostly creates, then mostly drops (the list shrinks past its bound), then creates.
                let dropPercent = [15, 85, 15][step / 200]
                let name = names[random.below(names.count)]
                if random.chance(dropPercent) {
                    #expect(try write.dropTree(name) == (model[name] != nil))
                    model[name] = nil
                } else {
                    let suffix = UInt8(random.below(4))
                    try write.createTree(name)
                    try write.put(name, key: Array(name.utf8) + [suffix], value: [suffix])
                    model[name, default: []].insert(suffix)
                }
                for other in names {
                    #expect(try write.info(other)?.count == model[other].map { UInt64($0.count) }, "\(other) at step \(step)")
                }
            }
        }
        try environment.read { (read: ReadTransaction) throws in
            for name in names {
                #expect(try read.info(name)?.count == model[name].map { UInt64($0.count) }, "\(name) committed")
                if let suffix = model[name]?.first {
                    #expect(try read.get(name, key: Array(name.utf8) + [suffix]) == [suffix])
                }
            }
        }
    }
}
