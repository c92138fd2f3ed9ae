import Foundation
import Testing
@testable import Trellis
#if !TRELLIS_LMDB
import TrellisLMDBFormat
#endif

/// A file written by the release before column copies (8ebe6ef, file format 2; made by
/// `F2Fixture.populate`, see Resources/FormatTwo) opens in this version: a writable open
/// upgrades it in one transaction, and every object reads as in a file this version writes.
@Suite struct FormatUpgradeTests {
    let folder = TemporaryFolder()
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/FormatTwo/format2.realm")

    func copyOfFixture(_ name: String) throws -> URL {
        let url = folder.file(name)
        try FileManager.default.copyItem(at: Self.fixture, to: url)
        return url
    }

    func storedFormat(_ url: URL) throws -> Int {
        let data = try Data(contentsOf: url)
        guard let range = data.range(of: Data("\"format\":".utf8)), let digit = data[range.upperBound...].first else {
            return -1
        }
        return Int(digit) - Int(UInt8(ascii: "0"))
    }

    @Test func aFormatTwoFileIsUpgradedOnOpenAndKeepsEveryObject() throws {
        let url = try copyOfFixture("upgraded.realm")
        #expect(try storedFormat(url) == 2)
        var configuration = Realm.Configuration(fileURL: url, objectTypes: F2Fixture.types())
        configuration.columnChunkShift = 3
        let upgraded = try Realm(configuration: configuration)
        #expect(upgraded.core.file.catalog.format == SchemaCatalog.formatVersion)
        #expect(upgraded.core.file.backlinkCounts != nil)
        #expect(upgraded.core.table(for: F2Owner.self, create: false)?.columns != nil)
        #expect(upgraded._consistencyProblems().isEmpty)

        let fresh = try Realm(configuration: folder.configuration(F2Fixture.types(), name: "fresh.realm"))
        try F2Fixture.populate(fresh)
        let lines = F2Fixture.describe(upgraded)
        #expect(lines.count == 873)
        #expect(lines == F2Fixture.describe(fresh))

        // Queries, aggregates and sorts now read the column copy, with the rows' answers.
        let owners = upgraded.objects(F2Owner.self)
        for text in ["age > 40", "optAge == nil", "name BEGINSWITH 'Zo'", "flag == true AND score < 10",
                     "oid != oid(000000000000000000000007)"]
        {
            upgraded.core.readsColumnCopies = true
            let columns = Array(owners.filter(text)).map(\.id)
            upgraded.core.readsColumnCopies = false
            let rows = Array(owners.filter(text)).map(\.id)
            upgraded.core.readsColumnCopies = true
            #expect(columns == rows, "\(text)")
            #expect(columns == Array(fresh.objects(F2Owner.self).filter(text)).map(\.id), "\(text)")
        }
        #expect(owners.sum(of: \.age) == fresh.objects(F2Owner.self).sum(of: \.age))
        // Backlink counts are stored by the upgrade too.
        #expect(Array(upgraded.objects(F2Dog.self).sorted(byKeyPath: "id")).map(\.owners.count)
            == Array(fresh.objects(F2Dog.self).sorted(byKeyPath: "id")).map(\.owners.count))
        #expect(upgraded.objects(F2Dog.self).filter("owners.@count > 3").count
            == fresh.objects(F2Dog.self).filter("owners.@count > 3").count)
        #expect(Array(owners.sorted(byKeyPath: "age")).map(\.id)
            == Array(fresh.objects(F2Owner.self).sorted(byKeyPath: "age")).map(\.id))

        // Writes after the upgrade keep the copy in step.
        try upgraded.write {
            upgraded.delete(owners.filter("id < 50"))
            owners.filter("id > 600").forEach { $0.age += 1000 }
        }
        #expect(upgraded._consistencyProblems().isEmpty)
        #expect(owners.filter("age >= 1000").count == Array(owners).filter { $0.age >= 1000 }.count)
        #expect(owners.filter("id < 50").isEmpty)
        #if !TRELLIS_LMDB
        // The fixture is an LMDB-format file: the open converted it to TrellisStorage first and
        // removed the original once the converted file was verified.
        #expect(try Data(contentsOf: url).prefix(8) == Data("TRLSTORE".utf8))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".lmdb-backup"))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".lmdb-converting"))
        #endif
    }

    @Test func aFormatTwoFileOpenedReadOnlyIsLeftAsItIsAndAnsweredFromTheRows() throws {
        let url = try copyOfFixture("readonly.realm")
        let before = try Data(contentsOf: url)
        var configuration = Realm.Configuration(fileURL: url, objectTypes: F2Fixture.types())
        configuration.readOnly = true
        #if !TRELLIS_LMDB
        // On TrellisStorage the fixture's LMDB format cannot be read without converting it, which a
        // read-only open never does: it fails naming `trellis upgrade FILE` and leaves the file.
        // Converted (what `trellis upgrade` does), the file opens read-only at catalog format 2.
        var refused: Realm.Error?
        do { _ = try Realm(configuration: configuration) } catch let error as Realm.Error { refused = error }
        #expect(refused?.code == .fileFormatUpgradeRequired)
        #expect(refused?.message.contains("trellis upgrade \(url.path)") == true)
        #expect(try Data(contentsOf: url) == before)
        try LMDBUpgrade.upgrade(path: url.path)
        let converted = try Data(contentsOf: url)
        #endif
        let realm = try Realm(configuration: configuration)
        #expect(realm.core.file.catalog.format == 2)
        #expect(realm.core.table(for: F2Owner.self, create: false)?.columns == nil)
        #expect(realm.core.file.backlinkCounts == nil)
        #expect(realm.objects(F2Dog.self).filter("id == 39").first?.owners.count == 7)
        let owners = realm.objects(F2Owner.self)
        #expect(owners.filter("age > 40").count == Array(owners).filter { $0.age > 40 }.count)
        #expect(owners.sum(of: \.age) == Array(owners).reduce(0) { $0 + $1.age })
        #expect(F2Fixture.describe(realm).count == 873)
        #if TRELLIS_LMDB
        #expect(try Data(contentsOf: url) == before)
        #else
        #expect(try Data(contentsOf: url) == converted)
        #endif
    }

    #if !TRELLIS_LMDB
    /// A conversion interrupted after the converted file replaced the original (the backup still
    /// beside it): a read-only open reads the converted file and leaves both; the next writable
    /// open checks the converted file against the backup and removes the backup.
    @Test func anInterruptedConversionIsReadReadOnlyAndFinishedByTheNextWritableOpen() throws {
        let url = try copyOfFixture("interrupted.realm")
        let backup = url.path + LMDBUpgrade.backupSuffix
        try LMDBUpgrade.upgrade(path: url.path)
        try FileManager.default.copyItem(at: Self.fixture, to: URL(fileURLWithPath: backup))
        #expect(LMDBUpgrade.state(ofFileAt: url.path) == .convertedWithBackup)
        let converted = try Data(contentsOf: url)

        var readOnly = Realm.Configuration(fileURL: url, objectTypes: F2Fixture.types())
        readOnly.readOnly = true
        do {
            let realm = try Realm(configuration: readOnly)
            #expect(F2Fixture.describe(realm).count == 873)
        }
        #expect(try Data(contentsOf: url) == converted)
        #expect(FileManager.default.fileExists(atPath: backup))

        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: F2Fixture.types()))
        #expect(F2Fixture.describe(realm).count == 873)
        #expect(!FileManager.default.fileExists(atPath: backup))
    }

    #endif
}
