import Foundation
import Testing
import Trellis

/// Realm's `ThreadSafeReference.isInvalidated`: false until the reference is resolved, true
/// after (a reference resolves once; Realm's ThreadSafeReferenceTests check it).
@Suite struct ThreadSafeReferenceInvalidationTests {
    let folder = TemporaryFolder()

    @Test func aReferenceIsInvalidatedOnceResolved() throws {
        let configuration = folder.configuration([Dog.self])
        let realm = try Realm(configuration: configuration)
        let dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let reference = ThreadSafeReference(to: dog)
        #expect(!reference.isInvalidated)
        let name = try onOtherThread {
            let other = try Realm(configuration: configuration)
            return other.resolve(reference)?.name
        }
        #expect(name == "Rex")
        #expect(reference.isInvalidated)
    }
}
