import Foundation
import Testing
import Trellis

final class MixedKVCHolder: Object {
    @Persisted var name = ""
    @Persisted var any: AnyRealmValue
}

final class MixedKVCTarget: Object {
    @Persisted var flag = false
}

/// Realm's dynamic getters (`object[key]`, `value(forKey:)`, a migration object's subscript)
/// hand an `AnyRealmValue` property out as the value it holds: nil for `.none`, a `String` for
/// `.string`, the object for `.object` (Realm's ObjectTests.testValueForKey, testSubscript,
/// testSetValueForKey); the setters take a plain value. Before, Trellis gave the
/// `AnyRealmValue` itself, and a migration object refused `"hello"` ("Invalid value 'hello' for
/// property '….any' of type 'mixed'").
@Suite struct AnyRealmValueKeyValueCodingTests {
    private func check(_ object: MixedKVCHolder, target: MixedKVCTarget) {
        #expect(object.value(forKey: "any") == nil)
        #expect(object["any"] == nil)
        object.setValue("hello", forKey: "any")
        #expect(object.any == .string("hello"))
        #expect(object.value(forKey: "any") as? String == "hello")
        object["any"] = 12345
        #expect(object["any"] as? Int == 12345)
        object["any"] = AnyRealmValue.bool(true)
        #expect(object["any"] as? Bool == true)
        object["any"] = target
        #expect((object["any"] as? MixedKVCTarget)?.flag == true)
        #expect(object.value(forKeyPath: "any.flag") as? Bool == true)
        object["any"] = nil
        #expect(object.any == .none)
    }

    @Test func anUnmanagedObjectReadsAndTakesThePlainValue() {
        check(MixedKVCHolder(), target: MixedKVCTarget(value: ["flag": true]))
    }

    @Test func aManagedObjectReadsAndTakesThePlainValue() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "mixed-kvc-\(UUID().uuidString)",
                                                   objectTypes: [MixedKVCHolder.self, MixedKVCTarget.self]))
        try realm.write {
            let object = realm.create(MixedKVCHolder.self)
            check(object, target: realm.create(MixedKVCTarget.self, value: ["flag": true]))
        }
    }

    @Test func aMigrationObjectReadsAndTakesThePlainValue() throws {
        let folder = TemporaryFolder()
        let types: [ObjectBase.Type] = [MixedKVCHolder.self, MixedKVCTarget.self]
        do {
            let realm = try Realm(configuration: folder.configuration(types, name: "mixed.realm"))
            try realm.write { realm.create(MixedKVCHolder.self, value: ["name": "a", "any": AnyRealmValue.int(7)]) }
        }
        var configuration = folder.configuration(types, name: "mixed.realm")
        configuration.schemaVersion = 1
        let seen = LockedBox<[String]>([])
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "MixedKVCHolder") { old, new in
                seen.mutate { $0.append("\(old?["any"] as? Int ?? -1)") }
                new?["any"] = "hello"
                seen.mutate { $0.append(new?["any"] as? String ?? "?") }
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(seen.get() == ["7", "hello"])
        #expect(realm.objects(MixedKVCHolder.self).first?.any == .string("hello"))
    }
}
