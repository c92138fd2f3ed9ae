import Foundation
import Testing
@testable import Trellis

// Properties declared the legacy way (Realm's SwiftIndexedOptionalPropertiesObject keeps
// `let optionalIntCol = RealmOptional<Int>()` and `let anyCol = RealmProperty<AnyRealmValue>()`
// when ported): Realm honours an `indexedProperties()` override for them.
final class OverrideIndexed: Object {
    let count = RealmProperty<Int?>()
    let flag = RealmProperty<Bool?>()
    let any = RealmProperty<AnyRealmValue>()
    let score = RealmProperty<Double?>()
    @available(*, deprecated)
    let legacyCount = RealmOptional<Int>()
    // A @Persisted property is indexed by its declaration alone, in Realm as here.
    @Persisted var name = ""

    override class func indexedProperties() -> [String] {
        ["count", "flag", "any", "legacyCount", "name", "noSuchProperty"]
    }
}

/// realm-core cannot index a float (or double, data, decimal, link or collection).
final class OverrideIndexedFloat: Object {
    let ratio = RealmProperty<Float?>()
    let tags = List<String>()
    override class func indexedProperties() -> [String] { ["ratio", "tags"] }
}

@Suite struct IndexedPropertiesOverrideTests {
    /// Realm's ObjectTests.testIndexedProperties / testIndexedOptionalProperties.
    @Test func theLegacyPropertiesAnOverrideNamesAreIndexedAndNoOthers() {
        let schema = OverrideIndexed().objectSchema
        for name in ["count", "flag", "any", "legacyCount"] {
            #expect(schema[name]?.isIndexed == true, "\(name)")
        }
        #expect(schema["score"]?.isIndexed == false)
        #expect(schema["name"]?.isIndexed == false)
        #expect(schema["noSuchProperty"] == nil)
        #expect(Object.indexedProperties() == [])
    }

    @Test func queriesOnPropertiesIndexedByTheOverrideSeeEveryWrite() throws {
        let folder = TemporaryFolder()
        let realm = try Realm(configuration: folder.configuration([OverrideIndexed.self]))
        try realm.write {
            for (index, count) in [1, 2, 1, nil].enumerated() {
                let object = realm.create(OverrideIndexed.self, value: ["name": "\(index)"])
                object.count.value = count
                object.flag.value = index % 2 == 0
            }
        }
        func names(_ predicate: String) -> [String] {
            realm.objects(OverrideIndexed.self).filter(predicate).map(\.name).sorted()
        }
        #expect(names("count == 1") == ["0", "2"])
        try realm.write {
            realm.objects(OverrideIndexed.self).filter("name == '2'").first?.count.value = 3
            if let last = realm.objects(OverrideIndexed.self).filter("name == '1'").first { realm.delete(last) }
        }
        #expect(names("count == 1") == ["0"])
        #expect(names("count == 3") == ["2"])
        #expect(names("count == 2") == [])
        #expect(names("count == nil") == ["3"])
        #expect(names("flag == true") == ["0", "2"])
    }

    @Test func anOverrideNamingAPropertyRealmCannotIndexFailsSchemaValidation() {
        let folder = TemporaryFolder()
        var message = ""
        do {
            _ = try Realm(configuration: folder.configuration([OverrideIndexedFloat.self]))
        } catch {
            message = (error as? Realm.Error)?.message ?? "\(error)"
        }
        #expect(message.hasPrefix("Schema validation failed due to the following errors:\n"))
        #expect(message.contains("- Property 'OverrideIndexedFloat.ratio' of type 'float' cannot be indexed."))
        #expect(message.contains("- Property 'OverrideIndexedFloat.tags' of type 'array' cannot be indexed."))
    }
}
