import Foundation
import Testing
@testable import Trellis

/// What opening a Realm learns of its model classes, pinned while the open stops asking the
/// runtime for conformances it does not need (each first lookup of a class scans every
/// conformance record of the process): which fields are properties, which are legacy, which
/// keep their accessor, whether a class is `Encodable`, and the schema differences it reports.
@Suite struct SchemaOpenDiscoveryTests {
    enum Before {
        final class Item: Object {
            override class func className() -> String { "OptionalityItem" }
            @Persisted var count = 0
            @Persisted var tags: List<Int>
            @Persisted var note: String?
        }
    }

    enum After {
        final class Item: Object {
            override class func className() -> String { "OptionalityItem" }
            @Persisted var count: Int?
            @Persisted var tags: List<String>
            @Persisted var note: String?
        }
    }

    /// A class of every kind of field: persisted ones, legacy ones, a to-one link whose type is
    /// new to the runtime, and a stored field that is no property.
    final class MixedFieldsOwner: Object {
        @Persisted var name = ""
        @Persisted var next: MixedFieldsTarget?
        @Persisted var targets: List<MixedFieldsTarget>
        @Persisted(originProperty: "owner") var owners: LinkingObjects<MixedFieldsTarget>
        let legacyTags = List<String>()
        let legacyAge = RealmProperty<Int?>()
        var transientCounter = 0
    }

    final class MixedFieldsTarget: Object {
        @Persisted var label = ""
        @Persisted var owner: MixedFieldsOwner?
    }

    final class EncodableNote: Object, Encodable {
        @Persisted var text = ""
    }

    @Test func aPropertyMadeOptionalIsReportedAsMadeOptionalNotAsRetyped() throws {
        let folder = TemporaryFolder()
        try onOtherThread { _ = try Realm(configuration: folder.configuration([Before.Item.self])) }
        let error = try onOtherThread { () -> Realm.Error? in
            do {
                _ = try Realm(configuration: folder.configuration([After.Item.self]))
                return nil
            } catch { return error as? Realm.Error }
        }
        #expect(error?.code == .schemaMismatch)
        let message = error?.message ?? ""
        #expect(message.contains("Property 'OptionalityItem.count' has been made optional."))
        #expect(!message.contains("'OptionalityItem.count' has been changed"))
        #expect(message.contains("Property 'OptionalityItem.tags' has been changed from 'array<int>' to 'array<string>'."))
        #expect(!message.contains("OptionalityItem.note"))
    }

    @Test func typesThatDifferOnlyInTheirQuestionMarksAreTheSameType() {
        #expect(SchemaCatalog.sameTypeIgnoringOptionality("int", "int?"))
        #expect(SchemaCatalog.sameTypeIgnoringOptionality("array<object<Dog>?>", "array<object<Dog>>"))
        #expect(!SchemaCatalog.sameTypeIgnoringOptionality("int", "string"))
        #expect(!SchemaCatalog.sameTypeIgnoringOptionality("array<int>", "set<int>"))
        #expect(!SchemaCatalog.sameTypeIgnoringOptionality("int", "int64"))
    }

    @Test func discoveryKeepsPersistedAndLegacyFieldsAndSkipsOtherStoredFields() {
        let info = ClassInfo.unbound(for: MixedFieldsOwner.self)
        #expect(info.fields.map(\.name) == ["name", "next", "targets", "owners", "legacyTags", "legacyAge"])
        #expect(info.legacyFields.map(\.name) == ["legacyTags", "legacyAge"])
        #expect(info.fields.filter { $0.witness.isLegacyField }.map(\.name) == ["legacyTags", "legacyAge"])
        // A stored field that is no property (and the legacy ones) make accessors not reusable.
        #expect(!info.accessorsAreReusable)
        #expect(ClassInfo.unbound(for: MixedFieldsTarget.self).accessorsAreReusable)
        // Collections and LinkingObjects declared with @Persisted keep their accessor; a to-one
        // link, a scalar and legacy fields do not.
        let kept = info.fields.filter { $0.witness.cachedAccessorType != nil }.map(\.name)
        #expect(kept == ["targets", "owners"])
    }

    @Test func classesWithEveryKindOfFieldReadAndWriteAfterOpening() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([MixedFieldsOwner.self, MixedFieldsTarget.self]))
        try realm.write {
            let owner = MixedFieldsOwner()
            owner.name = "o"
            owner.legacyTags.append("t")
            owner.legacyAge.value = 3
            let target = MixedFieldsTarget()
            target.label = "a"
            target.owner = owner
            owner.next = target
            owner.targets.append(target)
            realm.add(owner)
        }
        let owner = try #require(realm.objects(MixedFieldsOwner.self).first)
        #expect(owner.next?.label == "a")
        #expect(owner.targets.map(\.label) == ["a"])
        #expect(owner.owners.count == 1)
        #expect(Array(owner.legacyTags) == ["t"])
        #expect(owner.legacyAge.value == 3)
    }

    @Test func anEncodableClassIsFoundEncodableWhenItsFirstAccessorIsMade() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([EncodableNote.self, MixedFieldsOwner.self,
                                                                   MixedFieldsTarget.self]))
        try realm.write { realm.add(EncodableNote(value: ["text": "hi"])) }
        let table = try #require(realm.core.table(for: EncodableNote.self, create: false))
        #expect(table.isEncodable)
        #expect(table.needsAccessorSetup)
        let other = try #require(realm.core.table(for: MixedFieldsTarget.self, create: false))
        #expect(!other.isEncodable)
        #expect(!other.needsAccessorSetup)
        // Asked again: the remembered answer.
        #expect(table.isEncodable && !other.isEncodable)
        #expect(realm.objects(EncodableNote.self).first?.text == "hi")
    }
}
