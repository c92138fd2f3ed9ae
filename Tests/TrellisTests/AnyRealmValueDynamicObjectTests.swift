import Foundation
import Testing
import Trellis

final class DynamicMixedHolder: Object {
    @Persisted var name = ""
    @Persisted var any: AnyRealmValue
}

final class DynamicMixedTarget: Object {
    @Persisted var label = ""
    @Persisted var count = 0
}

/// Realm's `AnyRealmValue.dynamicObject`: the linked object read by property name, the same row
/// (Realm's AnyRealmValueTests.testDynamicObject, CustomColumnNameTests'
/// testCustomColumnDynamicObjectSubscript); nil for a value that is no object.
@Suite struct AnyRealmValueDynamicObjectTests {
    let folder = TemporaryFolder()

    @Test func aLinkedObjectReadsAndWritesThroughItsDynamicObject() throws {
        let realm = try Realm(configuration: folder.configuration([DynamicMixedHolder.self, DynamicMixedTarget.self]))
        let holder = DynamicMixedHolder()
        holder.any = .object(DynamicMixedTarget(value: ["label": "target", "count": 3]))
        try realm.write { realm.add(holder) }

        let dynamic = try #require(holder.any.dynamicObject)
        #expect(dynamic["label"] as? String == "target")
        #expect(dynamic.count as? Int == 3)
        try realm.write { dynamic["count"] = 4 }
        #expect(realm.objects(DynamicMixedTarget.self).first?.count == 4)

        #expect(AnyRealmValue.int(1).dynamicObject == nil)
        #expect(AnyRealmValue.none.dynamicObject == nil)
    }

    @Test func anObjectOfAClassMissingFromTheSchemaIsReadDynamically() throws {
        let configuration = folder.configuration([DynamicMixedHolder.self, DynamicMixedTarget.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let holder = realm.create(DynamicMixedHolder.self, value: ["name": "h"])
            holder.any = .object(realm.create(DynamicMixedTarget.self, value: ["label": "kept"]))
        }
        let partial = Realm.Configuration(fileURL: configuration.fileURL, objectTypes: [DynamicMixedHolder.self])
        let reopened = try onOtherThread {
            let realm = try Realm(configuration: partial)
            return realm.objects(DynamicMixedHolder.self).first?.any.dynamicObject?["label"] as? String
        }
        #expect(reopened == "kept")
    }
}
