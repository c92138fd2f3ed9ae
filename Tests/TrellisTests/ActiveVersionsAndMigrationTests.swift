import Foundation
import Testing
@testable import Trellis

/// `Realm.Configuration.maximumNumberOfActiveVersions` and `Realm.performMigration(for:)`,
/// with Realm's semantics and messages.
@Suite struct ActiveVersionsAndMigrationTests {
    let folder = TemporaryFolder()

    static func limitedRealm(_ limit: UInt?) -> Realm {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-versions-\(UUID()).realm")
        var configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self])
        configuration.maximumNumberOfActiveVersions = limit
        do { return try Realm(configuration: configuration) } catch { fatalError("could not open \(url): \(error)") }
    }

    @Test func aFrozenVersionCountsEveryVersionCommittedSince() throws {
        let realm = Self.limitedRealm(nil)
        let environment = realm.core.file.environment
        try realm.write { realm.add(Dog()) }
        #expect(environment.activeVersionCount() == 1)
        let frozen = realm.freeze()
        for _ in 0..<3 { try realm.write { realm.add(Dog()) } }
        #expect(environment.activeVersionCount() == 4)
        withExtendedLifetime(frozen) {}
    }

    @Test func writesWithinTheLimitWork() throws {
        // Realm's testActiveVersionLimit: with a limit of 3 and a frozen Realm pinning a
        // version, the first three writes work.
        let realm = Self.limitedRealm(3)
        let frozen = realm.freeze()
        for _ in 0..<3 { try realm.write { realm.add(Dog()) } }
        #expect(realm.objects(Dog.self).count == 3)
        withExtendedLifetime(frozen) {}
        // Without a pinned version, the versions behind the last commit are not alive.
        let unpinned = Self.limitedRealm(2)
        for _ in 0..<20 { try unpinned.write { unpinned.add(Dog()) } }
        #expect(unpinned.objects(Dog.self).count == 20)
    }

    @Test func exceedingTheLimitStopsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = ActiveVersionsAndMigrationTests.limitedRealm(3)
            let frozen = realm.freeze()
            for _ in 0..<4 { try? realm.write { realm.add(Dog()) } }
            withExtendedLifetime(frozen) {}
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Number of active versions (4) in the Realm exceeded the limit of 3"), "\(stderr)")
    }

    @Test func aZeroLimitMeansNoLimit() throws {
        let realm = Self.limitedRealm(0)
        let frozen = realm.freeze()
        for _ in 0..<5 { try realm.write { realm.add(Dog()) } }
        #expect(realm.objects(Dog.self).count == 5)
        withExtendedLifetime(frozen) {}
    }

    // MARK: - performMigration(for:)

    func configuration(_ types: [ObjectBase.Type], version: UInt64, block: MigrationBlock? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: folder.file(), schemaVersion: version, migrationBlock: block, objectTypes: types)
    }

    @Test func performMigrationRunsTheBlockAndLeavesTheFileClosed() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration([NoteV0.Note.self, NoteV0.Tag.self], version: 0))
            try realm.write { realm.add(NoteV0.Note(value: ["title": "Plan", "words": 3])) }
        }
        let calls = LockedBox(0)
        let migrating = configuration([NoteV1.Note.self, NoteV0.Tag.self], version: 1) { migration, _ in
            calls.mutate { $0 += 1 }
            migration.enumerateObjects(ofType: "DSNote") { old, new in new?["heading"] = old?["title"] }
        }
        try onOtherThread { try Realm.performMigration(for: migrating) }
        #expect(calls.get() == 1)
        #expect(!FileState.isOpen(path: folder.file().path))
        #expect(try schemaVersionAtURL(folder.file()) == 1)
        try onOtherThread {
            let realm = try Realm(configuration: migrating)
            #expect(realm.objects(NoteV1.Note.self).map(\.heading) == ["Plan"])
        }
        #expect(calls.get() == 1)  // opening afterwards has nothing left to migrate
    }

    @Test func performMigrationOfAMismatchedSchemaThrows() throws {
        try onOtherThread {
            _ = try Realm(configuration: configuration([NoteV0.Note.self, NoteV0.Tag.self], version: 0))
        }
        let error = try onOtherThread { () -> Realm.Error? in
            do {
                try Realm.performMigration(for: configuration([NoteV1.Note.self, NoteV0.Tag.self], version: 0))
                return nil
            } catch { return error as? Realm.Error }
        }
        #expect(error?.code == .schemaMismatch)
    }

    @Test func performMigrationOfAnOpenFileTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = ActiveVersionsAndMigrationTests.limitedRealm(nil)
            try? Realm.performMigration(for: realm.configuration)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot migrate Realms that are already open."))
    }
}
