import Foundation
import Testing
@testable import Trellis

final class UnlistedLinkHolder: Object {
    @Persisted var any: AnyRealmValue
}

final class UnlistedLinkTarget: Object {
    @Persisted var name = ""
}

/// Realm's AnyRealmValueObjectTests.testDynamicObjectAccessor: a file written with a class,
/// opened with `objectTypes` that leave it out. The Realm's schema is the configured classes,
/// and a mixed value linking to an object of the left-out class reads as a `DynamicObject`.
@Suite struct UnlistedClassLinkTests {
    private func writeHolderLinkingATarget(_ folder: TemporaryFolder) throws {
        let realm = try Realm(configuration: folder.configuration([UnlistedLinkHolder.self, UnlistedLinkTarget.self]))
        try realm.write {
            let holder = realm.create(UnlistedLinkHolder.self)
            holder.any = .object(realm.create(UnlistedLinkTarget.self, value: ["name": "kept"]))
        }
    }

    @Test func theSchemaOfARealmOpenedWithObjectTypesListsOnlyThose() throws {
        let folder = TemporaryFolder()
        try writeHolderLinkingATarget(folder)
        let realm = try Realm(configuration: folder.configuration([UnlistedLinkHolder.self]))
        #expect(realm.schema.objectSchema.map(\.className) == ["UnlistedLinkHolder"])
    }

    @Test func aMixedLinkToAClassLeftOutOfObjectTypesReadsAsADynamicObject() throws {
        let folder = TemporaryFolder()
        try writeHolderLinkingATarget(folder)
        let realm = try Realm(configuration: folder.configuration([UnlistedLinkHolder.self]))
        let holder = try #require(realm.objects(UnlistedLinkHolder.self).first)
        let target = try #require(holder.any.dynamicObject)
        #expect(target["name"] as? String == "kept")
        #expect(target.objectSchema.className == "UnlistedLinkTarget")
    }
}
