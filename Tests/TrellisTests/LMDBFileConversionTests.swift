// Files written by the LMDB build, converted: a test of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import CLMDB
import Foundation
import Testing
@testable import Trellis
import TrellisLMDBFormat
import TrellisStorage

/// Every property kind in one class (with `F2Owner`'s scalars, links and collections): sized
/// integers, an enum, an index, lists of values and of embedded objects, a map of objects and a
/// cascade rule (catalog format 5).
final class LCKind: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var code = ""
    @Persisted var small: Int8 = 0
    @Persisted var medium: Int16 = 0
    @Persisted var large: Int32 = 0
    @Persisted var mood: LCMood = .calm
    @Persisted var numbers: List<Int>
    @Persisted var words: MutableSet<String>
    @Persisted var optionalDoubles: List<Double?>
    @Persisted var places: List<LCPlace>
    @Persisted var friends: Map<String, LCKind?>
    @Persisted(onDelete: .cascade) var parts: List<LCPart>
    @Persisted var blob: Data
    @Persisted var any: AnyRealmValue
}

enum LCMood: Int, PersistableEnum { case calm, busy }

final class LCPlace: EmbeddedObject {
    @Persisted var name = ""
}

final class LCPart: Object {
    @Persisted var weight = 0.0
}

/// Files written by earlier Trellis versions (LMDB format) convert to TrellisStorage files that
/// hold every tree of the original, key for key and value for value: the format-2 fixture
/// (Resources/FormatTwo), files of format 3 and 4 (made as BacklinkCountTests makes them: the
/// current writer with the older catalog format and without the newer databases), and a file of
/// the current main with every property kind. The converted file is opened with TrellisStorage
/// and each tree compared with what liblmdb reads in the original.
@Suite struct LMDBFileConversionTests {
    let folder = TemporaryFolder()

    typealias Trees = [String: (integer: Bool, entries: [([UInt8], [UInt8])])]

    /// Every named database of an LMDB file as liblmdb reads it.
    static func lmdbTrees(_ path: String) throws -> Trees {
        var env: OpaquePointer?
        #expect(mdb_env_create(&env) == 0)
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 4096)
        try #require(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_RDONLY), 0o644) == 0, "opening '\(path)'")
        var txn: OpaquePointer?
        #expect(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        func entries(_ dbi: MDB_dbi) -> [([UInt8], [UInt8])] {
            var cursor: OpaquePointer?
            guard mdb_cursor_open(txn, dbi, &cursor) == 0 else { return [] }
            defer { mdb_cursor_close(cursor) }
            var result: [([UInt8], [UInt8])] = []
            var key = MDB_val(), value = MDB_val(), op = MDB_FIRST
            while mdb_cursor_get(cursor, &key, &value, op) == 0 {
                func bytes(_ v: MDB_val) -> [UInt8] {
                    v.mv_size == 0 ? [] : Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                }
                result.append((bytes(key), bytes(value)))
                op = MDB_NEXT
            }
            return result
        }
        var main: MDB_dbi = 0
        #expect(mdb_dbi_open(txn, nil, 0, &main) == 0)
        var trees: Trees = [:]
        for (name, _) in entries(main) {
            var dbi: MDB_dbi = 0
            let text = String(decoding: name, as: UTF8.self)
            guard mdb_dbi_open(txn, text, 0, &dbi) == 0 else { continue }
            var flags: UInt32 = 0
            mdb_dbi_flags(txn, dbi, &flags)
            trees[text] = (flags & UInt32(MDB_INTEGERKEY) != 0, entries(dbi))
        }
        return trees
    }

    /// Every tree of a TrellisStorage file.
    static func storageTrees(_ path: String) throws -> Trees {
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        _ = try environment.check()
        return try environment.read { transaction in
            var trees: Trees = [:]
            for name in try transaction.treeNames() {
                let info = try #require(try transaction.info(name))
                let cursor = try transaction.cursor(name)
                var entries: [([UInt8], [UInt8])] = []
                var more = try cursor.first()
                while more {
                    entries.append((try cursor.key(), try cursor.value()))
                    more = try cursor.next()
                }
                trees[name] = (info.order == .integer, entries)
            }
            return trees
        }
    }

    /// The `format` of the schema catalog in a file's `meta` tree.
    static func catalogFormat(_ trees: Trees) -> Int? {
        for (_, value) in trees["meta"]?.entries ?? [] {
            let data = Data(value)
            if let range = data.range(of: Data("\"format\":".utf8)), let digit = data[range.upperBound...].first {
                return Int(digit) - Int(UInt8(ascii: "0"))
            }
        }
        return nil
    }

    /// Converts a copy of `source` and compares every tree; returns the number of entries.
    @discardableResult
    func convertAndCompare(_ source: URL, _ label: String) throws -> Int {
        let path = folder.file("\(label)-converted.realm").path
        try FileManager.default.copyItem(atPath: source.path, toPath: path)
        let expected = try Self.lmdbTrees(path)
        #expect(!expected.isEmpty, "\(label)")

        let report = try LMDBUpgrade.upgrade(path: path)
        #expect(report.outcome == .converted, "\(label)")
        #expect(LMDBUpgrade.state(ofFileAt: path) == .trellisStorage, "\(label)")
        #expect(!FileManager.default.fileExists(atPath: path + LMDBUpgrade.backupSuffix), "\(label)")

        let actual = try Self.storageTrees(path)
        #expect(Set(actual.keys) == Set(expected.keys), "\(label)")
        #expect(Self.catalogFormat(actual) == Self.catalogFormat(expected), "\(label)")
        var entries = 0
        for (name, tree) in expected {
            let converted = try #require(actual[name], "\(label): tree \(name)")
            #expect(converted.integer == tree.integer, "\(label): tree \(name)")
            #expect(converted.entries.count == tree.entries.count, "\(label): tree \(name)")
            #expect(zip(converted.entries, tree.entries).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "\(label): tree \(name)")
            entries += tree.entries.count
        }
        print("LMDBFileConversionTests \(label) (catalog format \(Self.catalogFormat(actual) ?? -1)): \(expected.count) trees, \(entries) entries, \(report.bytesBefore) -> \(report.bytesAfter) bytes")
        return entries
    }

    func storedFormat(_ url: URL) throws -> Int {
        let data = try Data(contentsOf: url)
        guard let range = data.range(of: Data("\"format\":".utf8)), let digit = data[range.upperBound...].first else {
            return -1
        }
        return Int(digit) - Int(UInt8(ascii: "0"))
    }

    /// A file of the current writer with the catalog format set back to `format` (and, for 3,
    /// without the backlink counts that format 4 added).
    func olderFormatFile(_ format: Int) throws -> URL {
        let url = folder.file("format\(format).realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: F2Fixture.types()))
            try F2Fixture.populate(realm)
        }
        let environment = try Environment(path: url.path, readOnly: false, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
        let txn = try environment.beginWrite()
        let meta = try #require(try txn.database(named: "meta", create: false))
        var catalog = try FileState.readCatalog(txn, meta: meta, path: url.path)
        catalog.format = format
        try FileState.writeCatalog(catalog, txn: txn, meta: meta)
        if format < 4, let counts = try txn.database(named: FileState.backlinkCountsName, create: false) {
            #expect(mdb_drop(txn.handle, counts, 1) == 0)
        }
        try txn.commit()
        #expect(Self.catalogFormat(try Self.lmdbTrees(url.path)) == format)
        return url
    }

    /// Resources/LMDBFiles: format-3, format-4 and every-kind files written by this (LMDB) build,
    /// opened through `Realm` on the TrellisStorage build by LMDBFixtureOpenTests.
    static let checkedInFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/LMDBFiles")

    /// A file of the current main with every property kind (EveryKindFixture).
    func everyKindFile() throws -> URL {
        let url = folder.file("every-kind.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: EveryKindFixture.types()))
            try EveryKindFixture.populate(realm)
        }
        #expect(Self.catalogFormat(try Self.lmdbTrees(url.path)) == SchemaCatalog.formatVersion)
        return url
    }

    /// Writes Resources/LMDBFiles again (compacted copies, as `writeCopy` makes them), only when
    /// `TRELLIS_WRITE_LMDB_FIXTURES` names the folder to write them to:
    /// `TRELLIS_STORAGE_ENGINE=lmdb TRELLIS_WRITE_LMDB_FIXTURES=$PWD/Tests/TrellisTests/Resources/LMDBFiles
    /// swift test --scratch-path .build-lmdb --filter writesTheCheckedInFixtures`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TRELLIS_WRITE_LMDB_FIXTURES"] != nil))
    func writesTheCheckedInFixtures() throws {
        let target = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["TRELLIS_WRITE_LMDB_FIXTURES"]))
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        for (name, source) in [("format3.realm", try olderFormatFile(3)), ("format4.realm", try olderFormatFile(4)),
                               ("every-kind.realm", try everyKindFile())]
        {
            let destination = target.appendingPathComponent(name).path
            try? FileManager.default.removeItem(atPath: destination)
            let environment = try Environment(path: source.path, readOnly: true, initialMapSize: 1 << 24, mapSizeLimit: 1 << 30)
            try environment.copyCompacted(to: destination)
        }
    }

    /// The checked-in files are what their names say and convert tree for tree.
    @Test func theCheckedInFixturesConvertTreeForTree() throws {
        for (name, format) in [("format3", 3), ("format4", 4), ("every-kind", 5)] {
            // A copy: liblmdb makes a lock file beside what it opens.
            let url = folder.file("\(name)-checked-in.realm")
            try FileManager.default.copyItem(at: Self.checkedInFixtures.appendingPathComponent("\(name).realm"), to: url)
            #expect(Self.catalogFormat(try Self.lmdbTrees(url.path)) == format, "\(name)")
            #expect(try convertAndCompare(url, name) > 1000)
        }
    }

    @Test func theFormatTwoFixtureConverts() throws {
        let fixture = FormatUpgradeTests.fixture
        #expect(try storedFormat(fixture) == 2)
        #expect(try convertAndCompare(fixture, "format2") > 1000)
    }

    @Test func formatThreeAndFourFilesConvert() throws {
        try convertAndCompare(try olderFormatFile(3), "format3")
        try convertAndCompare(try olderFormatFile(4), "format4")
    }

    @Test func aFileOfTheCurrentMainWithEveryPropertyKindConverts() throws {
        let url = folder.file("kinds.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: F2Fixture.types() + [LCKind.self, LCPlace.self, LCPart.self]))
            try F2Fixture.populate(realm)
            try realm.write {
                var previous: LCKind?
                for index in 0..<600 {
                    let kind = LCKind(value: [
                        "id": index, "code": "c\(index % 37)", "small": Int8(index % 100), "medium": Int16(index),
                        "large": Int32(index * 1000), "mood": index % 2 == 0 ? LCMood.calm : LCMood.busy,
                        "numbers": Array(0..<(index % 7)), "words": ["w\(index % 5)", "x"],
                        "optionalDoubles": [1.5, nil], "places": [["name": "p\(index)"]],
                        "parts": [["weight": Double(index)]],
                        "blob": Data(repeating: UInt8(index % 256), count: index % 3 == 0 ? 9000 : 20),
                        "any": index % 2 == 0 ? AnyRealmValue.int(index) : AnyRealmValue.string("a\(index)"),
                    ])
                    if let previous { kind.friends["before"] = previous }
                    realm.add(kind)
                    previous = kind
                }
            }
        }
        #expect(Self.catalogFormat(try Self.lmdbTrees(url.path)) == SchemaCatalog.formatVersion)
        #expect(try convertAndCompare(url, "current") > 5000)
    }

    /// `trellis upgrade FILE` converts, says what it did, and a second run does nothing.
    @Test func theUpgradeCommandConvertsAFileAndReportsErrorsInOneLine() throws {
        let path = folder.file("cli.realm").path
        try FileManager.default.copyItem(atPath: FormatUpgradeTests.fixture.path, toPath: path)
        let expected = try Self.lmdbTrees(path)

        let first = try runTrellis(["upgrade", path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("Converted \(path): \(expected.count) trees"), "\(first.stdout)")
        #expect(LMDBUpgrade.state(ofFileAt: path) == .trellisStorage)
        #expect(try Self.storageTrees(path).count == expected.count)

        let second = try runTrellis(["upgrade", path])
        #expect(second.status == 0)
        #expect(second.stdout.contains("already in the current format"), "\(second.stdout)")

        let foreign = folder.file("foreign.realm").path
        try Data(repeating: 1, count: 5000).write(to: URL(fileURLWithPath: foreign))
        let refused = try runTrellis(["upgrade", foreign])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.hasPrefix("trellis: error: cannot upgrade '\(foreign)': "), "\(refused.stderr)")
        #expect(refused.stderr.contains("neither a TrellisStorage file nor an LMDB-format Trellis file"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
    }
}
#endif
