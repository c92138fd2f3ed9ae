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
}
