import Foundation
import Testing
import TrellisLMDBFormat
import TrellisStorage

/// `LMDBUpgrade` turns an LMDB-format file into a TrellisStorage file with the same trees, keys
/// and values (integer-key databases as integer-ordered trees), keeps the original until the
/// new file is verified, and finishes or restarts a conversion that stopped half-way.
@Suite struct LMDBConversionTests {
    /// Every tree of a TrellisStorage file, by name.
    static func storageView(_ path: String) throws -> [String: LMDBFileMaker.Dump] {
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        _ = try environment.check()
        return try environment.read { transaction in
            var view: [String: LMDBFileMaker.Dump] = [:]
            for name in try transaction.treeNames() {
                let info = try #require(try transaction.info(name))
                var entries: [([UInt8], [UInt8])] = []
                let cursor = try transaction.cursor(name)
                var more = try cursor.first()
                while more {
                    entries.append((try cursor.key(), try cursor.value()))
                    more = try cursor.next()
                }
                #expect(UInt64(entries.count) == info.count)
                view[name] = LMDBFileMaker.Dump(integerKeys: info.order == .integer, entries: entries)
            }
            return view
        }
    }

    /// A random LMDB file and what liblmdb reads in it (tree names as the conversion names them).
    static func makeFile(_ path: String, seed: UInt64, databases: Int = 10, entries: Int = 400,
                         mainEntries: Bool = false) -> [String: LMDBFileMaker.Dump]
    {
        let maker = LMDBFileMaker(path: path)
        let specs = maker.fillRandomly(seed: seed, databases: databases, entriesPerDatabase: entries,
                                       mainEntries: mainEntries)
        var expected = LMDBReaderDifferentialTests.lmdbView(maker, names: specs.map(\.name), mainEntries: mainEntries)
        if let main = expected.removeValue(forKey: "") { expected[LMDBUpgrade.mainDatabaseTreeName] = main }
        maker.close()
        return expected
    }

    static func leftovers(_ path: String) -> [String] {
        [LMDBUpgrade.backupSuffix, LMDBUpgrade.convertingSuffix, LMDBUpgrade.convertingSuffix + "-lock"]
            .map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func aConvertedFileHoldsEveryTreeKeyAndValueOfTheOriginal(seed: UInt64) throws {
        // Given an LMDB-format file
        let directory = temporaryDirectory("lmdb-convert")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let expected = Self.makeFile(path, seed: seed, mainEntries: seed == 12)
        #expect(LMDBUpgrade.state(ofFileAt: path) == .lmdb)

        // When it is upgraded
        var steps: [LMDBUpgrade.Step] = []
        let report = try LMDBUpgrade.upgrade(path: path) { steps.append($0) }

        // Then it is a TrellisStorage file with the same trees, and nothing else is left
        #expect(report.outcome == .converted)
        #expect(report.trees == expected.count)
        #expect(report.entries == UInt64(expected.values.reduce(0) { $0 + $1.entries.count }))
        #expect(LMDBUpgrade.state(ofFileAt: path) == .trellisStorage)
        #expect(Self.leftovers(path).isEmpty)
        #expect(Array(steps.suffix(5)) == [.written, .verified, .backupMade, .replaced, .finished])
        let actual = try Self.storageView(path)
        #expect(Set(actual.keys) == Set(expected.keys))
        for (name, dump) in expected { #expect(actual[name] == dump ? true : false, "seed \(seed), tree '\(name)'") }

        // and a second upgrade does nothing.
        #expect(try LMDBUpgrade.upgrade(path: path).outcome == .alreadyCurrent)
    }

    @Test func aConversionStoppedBeforeTheRenameStartsAgain() throws {
        // Given the leftovers of a conversion stopped before its new file replaced the original:
        // a partial new file and a backup name of the original
        let directory = temporaryDirectory("lmdb-restart")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let expected = Self.makeFile(path, seed: 21)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: path + LMDBUpgrade.convertingSuffix))
        try FileManager.default.linkItem(atPath: path, toPath: path + LMDBUpgrade.backupSuffix)
        #expect(LMDBUpgrade.state(ofFileAt: path) == .lmdb)

        // When it is upgraded, the conversion starts again and ends normally
        #expect(try LMDBUpgrade.upgrade(path: path).outcome == .converted)
        #expect(Self.leftovers(path).isEmpty)
        let actual = try Self.storageView(path)
        for (name, dump) in expected { #expect(actual[name] == dump ? true : false, "tree '\(name)'") }
    }

    @Test func aConversionStoppedAfterTheRenameIsCheckedAgainstTheBackupAndFinished() throws {
        // Given a converted file with its backup still beside it
        let directory = temporaryDirectory("lmdb-finish")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let expected = Self.makeFile(path, seed: 31)
        try FileManager.default.copyItem(atPath: path, toPath: directory + "/original")
        try LMDBUpgrade.upgrade(path: path)
        try FileManager.default.copyItem(atPath: directory + "/original", toPath: path + LMDBUpgrade.backupSuffix)
        #expect(LMDBUpgrade.state(ofFileAt: path) == .convertedWithBackup)

        // When it is upgraded again, the backup is compared and removed
        let report = try LMDBUpgrade.upgrade(path: path)
        #expect(report.outcome == .finishedEarlierConversion)
        #expect(LMDBUpgrade.state(ofFileAt: path) == .trellisStorage)
        #expect(Self.leftovers(path).isEmpty)
        let actual = try Self.storageView(path)
        for (name, dump) in expected { #expect(actual[name] == dump ? true : false, "tree '\(name)'") }
    }

    @Test func aBackupThatDoesNotMatchTheConvertedFileIsKeptAndReported() throws {
        // Given a converted file beside a backup of different contents
        let directory = temporaryDirectory("lmdb-mismatch")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        _ = Self.makeFile(path, seed: 41)
        try LMDBUpgrade.upgrade(path: path)
        _ = Self.makeFile(path + LMDBUpgrade.backupSuffix, seed: 42)
        try? FileManager.default.removeItem(atPath: path + LMDBUpgrade.backupSuffix + "-lock")

        // Then finishing refuses with a typed error and keeps both files
        let error = try #require(throws: LMDBFormatError.self) { try LMDBUpgrade.upgrade(path: path) }
        guard case .verificationFailed = error.code else {
            Issue.record("expected verificationFailed, got \(error)")
            return
        }
        #expect(FileManager.default.fileExists(atPath: path + LMDBUpgrade.backupSuffix))
        #expect(LMDBUpgrade.state(ofFileAt: path) == .convertedWithBackup)
    }

    @Test func theReadOnlyErrorNamesTheUpgradeCommand() {
        let error = LMDBFormatError.upgradeRequired(path: "/data/app.realm")
        #expect(error.code == .upgradeRequired)
        #expect(error.message.contains("trellis upgrade /data/app.realm"))
    }
}
