import Foundation
import Testing
@testable import Trellis

class DLTarget: Object {
    @Persisted var flag = false
}

class DLOwner: Object {
    @Persisted var name = ""
    @Persisted var target: DLTarget?
}

/// Realm's RealmTests.testDynamicObjectProperties / testIterateDynamicObjects: in a Realm that
/// has the model classes, a to-one link read through a `DynamicObject` is an object of the
/// target's model class (`object["objectCol"] as? SwiftBoolObject`), not another DynamicObject.
@Suite struct DynamicLinkTargetTests {
    let folder = TemporaryFolder()

    @Test func aLinkReadThroughADynamicObjectIsAnObjectOfTheTargetsModelClass() throws {
        let realm = try Realm(configuration: folder.configuration([DLOwner.self, DLTarget.self]))
        try realm.write {
            realm.create(DLOwner.self, value: ["name": "a", "target": ["flag": false]])
            realm.create(DLOwner.self, value: ["name": "b"])
        }
        let owners = realm.dynamicObjects("DLOwner").sorted(byKeyPath: "name")
        let target = owners[0]["target"]
        #expect((target as? DLTarget)?.flag == false)
        #expect(!(target is DynamicObject))
        #expect((owners[0].target as? DLTarget)?.isSameObject(as: realm.objects(DLTarget.self).first) == true)
        #expect(owners[1]["target"] == nil)
        // Every object of an iteration alike.
        #expect(owners.map { ($0["target"] as? DLTarget)?.flag } == [false, nil])
    }
}
