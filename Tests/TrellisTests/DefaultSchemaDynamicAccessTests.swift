import Foundation
import Testing
import Trellis

/// Used only by `aModelClassNeverUsedIsCreatedDynamically` (a class no other test touches).
final class NeverUsedDynamicTarget: Object {
    @Persisted var label = ""
}

/// Used only by `anEmbeddedClassNeverUsedTrapsWithRealmsMessage`.
final class NeverUsedEmbeddedTarget: EmbeddedObject {
    @Persisted var label = ""
}

/// A Realm opened without `objectTypes` has every model class of the program (Realm's default
/// schema), for dynamic access too: `dynamicCreate` of a class no code used yet creates it, and
/// of an embedded class traps with Realm's "Embedded objects cannot be created directly"
/// (Realm's ObjectCreationTests.testDynamicCreateEmbeddedDirectly). Before, both trapped "Object
/// type '…' is not managed by the Realm". Observing an unknown key path traps with Realm's
/// words, "Invalid property name: property 'x' not found in object of type 'C'"
/// (ObjectTests.testObserveInvalidKeyPath looks for "property 'notAProperty' not found…").
@Suite struct DefaultSchemaDynamicAccessTests {
    let folder = TemporaryFolder()

    @Test func aModelClassNeverUsedIsCreatedDynamically() throws {
        let realm = try Realm(configuration: .init(fileURL: folder.file("default.realm")))
        try realm.write { _ = realm.dynamicCreate("NeverUsedDynamicTarget", value: ["label": "made"]) }
        #expect(realm.dynamicObjects("NeverUsedDynamicTarget").first?["label"] as? String == "made")
    }

    @Test func anEmbeddedClassNeverUsedTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("embedded-\(UUID()).realm")
            let realm = try Realm(configuration: .init(fileURL: url))
            realm.beginWrite()
            _ = realm.dynamicCreate("NeverUsedEmbeddedTarget")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Embedded objects cannot be created directly"))
    }

    @Test func observingAnUnknownKeyPathTrapsWithRealmsWords() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("observe-\(UUID()).realm")
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            let dog = Dog()
            try realm.write { realm.add(dog) }
            _ = dog.observe(keyPaths: ["notAProperty"]) { _ in }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid property name: property 'notAProperty' not found in object of type 'Dog'"))
    }
}
