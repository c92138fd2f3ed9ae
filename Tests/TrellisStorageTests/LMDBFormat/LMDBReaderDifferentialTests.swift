import CLMDB
import Foundation
import Testing
import TrellisLMDBFormat

/// The reader of LMDB's page format written here (`TrellisLMDBFormat`) sees exactly what
/// liblmdb sees: for seeded random files with many named databases of every key kind, empty
/// ones, overflow values, the longest keys, trees three levels deep, dropped and refilled
/// databases, and plain entries in the main database. `TRELLIS_LMDB_READER_SEEDS=N` runs N seeds.
@Suite struct LMDBReaderDifferentialTests {
    static var seeds: [UInt64] {
        (1...UInt64(environmentInteger("TRELLIS_LMDB_READER_SEEDS", default: 4))).map { $0 }
    }

    /// The reader's view of every database, keyed by name ("" for the main database's plain
    /// entries).
    static func readerView(_ path: String) throws -> [String: LMDBFileMaker.Dump] {
        let reader = try LMDBFileReader(path: path)
        var view: [String: LMDBFileMaker.Dump] = [:]
        var main: [([UInt8], [UInt8])] = []
        try reader.forEachEntry(in: reader.mainDatabase) { main.append((Array($0), Array($1))) }
        if !main.isEmpty { view[""] = LMDBFileMaker.Dump(integerKeys: false, entries: main) }
        for database in try reader.namedDatabases() {
            var entries: [([UInt8], [UInt8])] = []
            try reader.forEachEntry(in: database) { entries.append((Array($0), Array($1))) }
            #expect(UInt64(entries.count) == database.entries)
            view[try #require(database.name)] = LMDBFileMaker.Dump(integerKeys: database.hasIntegerKeys, entries: entries)
        }
        return view
    }

    /// liblmdb's view of the same databases.
    static func lmdbView(_ maker: LMDBFileMaker, names: [String], mainEntries: Bool) -> [String: LMDBFileMaker.Dump] {
        var view: [String: LMDBFileMaker.Dump] = [:]
        let nameSet = Set(names)
        if mainEntries {
            view[""] = LMDBFileMaker.Dump(integerKeys: false, entries: maker.dump(nil).filter {
                !nameSet.contains(String(decoding: $0.0, as: UTF8.self))
            })
        }
        for name in names {
            view[name] = LMDBFileMaker.Dump(integerKeys: maker.flags(name) & UInt32(MDB_INTEGERKEY) != 0,
                                            entries: maker.dump(name))
        }
        return view
    }

    @Test(arguments: seeds)
    func theReaderSeesExactlyWhatLMDBSees(seed: UInt64) throws {
        // Given a file written by liblmdb over several commits
        let directory = temporaryDirectory("lmdb-reader")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let maker = LMDBFileMaker(path: path)
        let mainEntries = seed % 2 == 0
        var specs = maker.fillRandomly(seed: seed, databases: 12 + Int(seed % 20), entriesPerDatabase: 600,
                                       mainEntries: mainEntries)
        // and one tree three levels deep.
        maker.write { txn in
            let dbi = LMDBFileMaker.open(txn, "deep", integer: true)
            for key in 0..<UInt64(30_000) {
                LMDBFileMaker.put(txn, dbi, withUnsafeBytes(of: key &* 7) { Array($0) }, Array(repeating: UInt8(key & 255), count: 40))
            }
        }
        specs.append(.init(name: "deep", kind: .integer8))
        let names = specs.map(\.name)

        // When the reader reads it, with LMDB's environment still open (nothing written)
        let expected = Self.lmdbView(maker, names: names, mainEntries: mainEntries)
        let actual = try Self.readerView(path)

        // Then it sees every database, flag, key and value LMDB sees
        #expect(Set(actual.keys) == Set(expected.keys))
        for (name, dump) in expected {
            #expect(actual[name] == dump ? true : false, "seed \(seed), database '\(name)': \(actual[name]?.entries.count ?? -1) entries, LMDB has \(dump.entries.count)")
        }
        let reader = try LMDBFileReader(path: path)
        let deep = try #require(try reader.namedDatabases().first { $0.name == "deep" })
        #expect(deep.depth >= 3)
        let entries = expected.values.reduce(0) { $0 + $1.entries.count }
        let overflow = expected.values.reduce(0) { $0 + $1.entries.filter { $0.1.count > 2000 }.count }
        print("LMDBReaderDifferentialTests seed \(seed): \(expected.count) databases, \(entries) entries, \(overflow) overflow values, page size \(reader.pageSize)")
        maker.close()
    }

    @Test func aDatabaseWithSortedDuplicatesIsListedAndRefusedWithATypedError() throws {
        // Given a file with an MDB_DUPSORT database (no Trellis version made one)
        let directory = temporaryDirectory("lmdb-dupsort")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let maker = LMDBFileMaker(path: path)
        maker.write { txn in
            let plain = LMDBFileMaker.open(txn, "plain")
            LMDBFileMaker.put(txn, plain, [1], [2])
            let dups = LMDBFileMaker.open(txn, "dups", duplicates: true)
            for value in 0..<UInt8(50) { LMDBFileMaker.put(txn, dups, [7], [value]) }
        }
        maker.close()

        // Then the reader lists it with its flag, and refuses its entries naming it
        let reader = try LMDBFileReader(path: path)
        let dups = try #require(try reader.namedDatabases().first { $0.name == "dups" })
        #expect(dups.hasSortedDuplicates)
        let error = try #require(throws: LMDBFormatError.self) { try reader.forEachEntry(in: dups) { _, _ in } }
        #expect(error.code == .unsupportedDatabase(name: "dups"))
        #expect(error.message.contains("MDB_DUPSORT"))
        // and the conversion refuses the file, leaving it as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refusal = try #require(throws: LMDBFormatError.self) { try LMDBUpgrade.upgrade(path: path) }
        #expect(refusal.code == .unsupportedDatabase(name: "dups"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(LMDBUpgrade.state(ofFileAt: path) == .lmdb)
        #expect(!FileManager.default.fileExists(atPath: path + LMDBUpgrade.convertingSuffix))
        #expect(!FileManager.default.fileExists(atPath: path + LMDBUpgrade.backupSuffix))
    }

    @Test func aFileThatIsNotLMDBIsATypedError() throws {
        let directory = temporaryDirectory("lmdb-foreign")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: LMDBFormatError.self) { try LMDBFileReader(path: path) }
        #expect(error.code == .notLMDBFile)
        let upgrade = try #require(throws: LMDBFormatError.self) { try LMDBUpgrade.upgrade(path: path) }
        #expect(upgrade.code == .notLMDBFile)
    }
}
