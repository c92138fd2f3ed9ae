import Foundation
import Testing
@testable import Trellis

/// A model overriding Realm's legacy schema hooks, which Realm ignores for `@Persisted` models.
final class HookedModel: Object {
    @Persisted var name = ""
    @Persisted var rank = 0
    var scratch = "not stored"
    override class func indexedProperties() -> [String] { ["name"] }
    override class func ignoredProperties() -> [String] { ["rank"] }
}

/// `Realm.Error` with Realm's members and types, and the legacy class methods.
@Suite struct RealmErrorAndSchemaHookTests {
    let folder = TemporaryFolder()

    @Test func legacySchemaHooksAreNotConsultedForPersistedModels() throws {
        let realm = try Realm(configuration: folder.configuration([HookedModel.self]))
        let schema = try #require(realm.schema["HookedModel"])
        // As in Realm: @Persisted declarations decide; the hooks change nothing.
        #expect(schema.properties.map(\.name) == ["name", "rank"])
        #expect(schema["name"]?.isIndexed == false)
        #expect(HookedModel.indexedProperties() == ["name"])
        try realm.write { realm.add(HookedModel(value: ["name": "a", "rank": 2])) }
        #expect(realm.objects(HookedModel.self).first?.rank == 2)
    }

    @Test func errorsCarryTheFileAsAURLAndBridgeToNSErrorAsRealmsDo() throws {
        let folderPath = folder.url.path
        var caught: Realm.Error?
        do {
            _ = try Realm(configuration: .init(fileURL: folder.url, objectTypes: [Dog.self]))
        } catch let error as Realm.Error {
            caught = error
        }
        let error = try #require(caught)
        #expect(error.code == .fileAccess)
        #expect(error.fileURL == URL(fileURLWithPath: folderPath))
        #expect(error.filePath == folderPath)
        let bridged = error as NSError
        #expect(bridged.domain == "io.realm")
        #expect(bridged.code == 2)  // RLMErrorFileAccess
        #expect(bridged.userInfo[NSFilePathErrorKey] as? String == folderPath)
        #expect(bridged.localizedDescription == error.message)
    }

    @Test func realmsCodeShorthandsMatchInCatchClauses() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([Dog.self]))
            try realm.write { realm.add(Dog()) }
        }
        var matched = false
        do {
            _ = try Realm(configuration: folder.configuration([Reshaped.Dog.self]))
        } catch Realm.Error.schemaMismatch {
            matched = true
        }
        #expect(matched)
        #expect(Realm.Error.Code.schemaMismatch.rawValue == 10)
        #expect(Realm.Error.outOfDiskSpace == .diskFull)
        #expect(Realm.Error.Code.invalidInput.rawValue == 13)
    }

    @Test func aFileThatIsNotADatabaseIsCaughtAsRealmsInvalidDatabase() throws {
        let url = folder.file("not-a-database.realm")
        try Data(repeating: 0x41, count: 8192).write(to: url)
        var caught = false
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [Dog.self]))
        } catch Realm.Error.invalidDatabase {
            caught = true
        } catch Realm.Error.incompatibleLockFile {
            Issue.record("a bad file is not a lock file problem")
        }
        #expect(caught)
        #expect(!(Realm.Error.invalidDatabase ~= CocoaError(.fileNoSuchFile)))
        #expect((Realm.Error(.corruptFile, "damaged") as NSError).code == Realm.Error.Code.invalidDatabase.rawValue)
        #expect(Realm.Error.invalidDatabase ~= Realm.Error(.corruptFile, "damaged"))
        #expect(!(Realm.Error.schemaMismatch ~= Realm.Error(.corruptFile, "damaged")))
    }

    @Test func realmsOtherErrorCodesHaveRealmsNumbers() {
        let numbers: [(Realm.Error.Code, Int)] = [
            (.incompatibleLockFile, 8), (.incompatibleSession, 15), (.unsupportedFileFormatVersion, 16),
            (.multipleSyncAgents, 17), (.subscriptionFailed, 18), (.fileOperationFailed, 19),
            (.invalidDatabase, 20), (.incompatibleHistories, 21), (.noSubscriptionForWrite, 22),
        ]
        for (code, number) in numbers { #expect(code.rawValue == number, "\(code)") }
    }

    /// Realm's RealmTests.testAsyncWriteCancelsOnThrow throws `Realm.Error(.fail)` from a write
    /// and compares what it catches with another `Realm.Error(.fail)`.
    @Test func appCodeMakesThrowsAndComparesRealmErrorsAsInRealm() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        var caught: Realm.Error?
        do {
            try realm.write {
                realm.create(Dog.self, value: ["name": "a"])
                throw Realm.Error(.fail)
            }
        } catch let error as Realm.Error {
            caught = error
        }
        #expect(caught == Realm.Error(.fail))
        #expect(caught != Realm.Error(.fileAccess))
        #expect(realm.objects(Dog.self).isEmpty)
        let gone = Realm.Error(.fileNotFound, userInfo: [NSLocalizedDescriptionKey: "gone", NSFilePathErrorKey: "/tmp/x"])
        #expect(gone.localizedDescription == "gone")
        #expect(gone.fileURL == URL(fileURLWithPath: "/tmp/x"))
        #expect(gone.userInfo[NSLocalizedDescriptionKey] as? String == "gone")
        #expect(Realm.Error.callFailed.localizedDescription == "Call failed")
        #expect(Realm.Error(.fail).localizedDescription == "The operation couldn’t be completed. (io.realm error 1.)")
        #expect(Set([Realm.Error(.fail), Realm.Error(.fail), gone]).count == 2)
    }
}
