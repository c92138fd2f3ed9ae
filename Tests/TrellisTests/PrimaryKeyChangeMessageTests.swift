import Foundation
import Testing
import Trellis

final class LegacyKeyed: Object {
    let id = RealmProperty<Int?>()
    @Persisted var name = ""
    override class func primaryKey() -> String? { "id" }
}

/// A managed object's primary key cannot change; Realm words the trap by the way the write
/// came (Realm's ObjectTests.testCannotUpdatePrimaryKey): the accessor's "Primary key can't be
/// changed after an object is inserted." for `@Persisted` properties and for `object[key]` on
/// any property, realm-core's "Cannot modify primary key after creation: 'Class.property'" for
/// a legacy `RealmProperty`'s `value` and `setValue(_:forKey:)` on it. Before, Trellis gave the
/// accessor's message every time.
@Suite struct PrimaryKeyChangeMessageTests {
    private static func writeKey(_ change: (LegacyKeyed) -> Void) {
        do {
            let realm = try Realm(configuration: .init(inMemoryIdentifier: "pk-message-\(UUID().uuidString)",
                                                       objectTypes: [LegacyKeyed.self]))
            try realm.write {
                let object = LegacyKeyed()
                object.id.value = 1
                realm.add(object)
                change(object)
            }
        } catch {
            print("unexpected error \(error)")
        }
    }

    @Test func aLegacyValueGetsRealmCoresMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Self.writeKey { $0.id.value = 2 }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot modify primary key after creation: 'LegacyKeyed.id'"))
    }

    @Test func keyValueCodingOnALegacyValueGetsRealmCoresMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Self.writeKey { $0.setValue(2, forKey: "id") }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot modify primary key after creation: 'LegacyKeyed.id'"))
    }

    @Test func theSubscriptGetsTheAccessorsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Self.writeKey { $0["id"] = 2 }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Primary key can't be changed after an object is inserted."))
    }

    @Test func anUnmanagedLegacyKeyCanChange() {
        let object = LegacyKeyed()
        object.id.value = 1
        object.id.value = 0
        #expect(object.id.value == 0)
    }
}
