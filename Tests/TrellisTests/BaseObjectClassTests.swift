import Foundation
import Testing
@testable import Trellis

/// `Object` itself is no model class (Realm's RealmTests.testObjects: `realm.objects(Object.self)`
/// throws, as `dynamicObjects("Object")` does).
@Suite struct BaseObjectClassTests {
    @Test func objectsOfObjectItselfTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) else { return }
            _ = realm.objects(Object.self)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Object type 'Object' is not managed by the Realm."))
    }

    @Test func objectsOfAModelClassIsNotAffected() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write { realm.add(Dog()) }
        #expect(realm.objects(Dog.self).count == 1)
    }
}
