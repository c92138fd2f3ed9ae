import Foundation
import Testing
import Trellis

final class SetOrMixedHolder: Object {
    @Persisted var any: AnyRealmValue
    @Persisted var tags: List<String>
    @Persisted var labels: MutableSet<String>
}

/// `create(_:value:)` refuses a `MutableSet` for an `AnyRealmValue` property, as Realm does
/// (RealmSwift/Tests ObjectCreationTests `testCreateWithDictionary`/`testCreateWithArray`: the
/// invalid value for `.any` is `MutableSet<String>()`). Before, `create` copied the set's
/// elements into an array, which the property stored as a nested list.
@Suite struct CreateRefusesASetForAnyRealmValueTests {
    static func realm() -> Realm {
        do {
            return try Realm(configuration: .init(inMemoryIdentifier: "set-mixed-\(UUID().uuidString)",
                                                  objectTypes: [SetOrMixedHolder.self]))
        } catch {
            fatalError("could not open an in-memory Realm: \(error)")
        }
    }

    @Test func aSetForAnAnyRealmValuePropertyTrapsInADictionary() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = CreateRefusesASetForAnyRealmValueTests.realm()
            realm.beginWrite()
            realm.create(SetOrMixedHolder.self, value: ["any": MutableSet<String>()])
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid value") && stderr.contains("'SetOrMixedHolder.any'"))
    }

    @Test func aSetForAnAnyRealmValuePropertyTrapsInAnArray() async {
        await #expect(processExitsWith: .failure) {
            let realm = CreateRefusesASetForAnyRealmValueTests.realm()
            realm.beginWrite()
            realm.create(SetOrMixedHolder.self, value: [MutableSet<String>()])
        }
    }

    @Test func aSetStillFillsAListOrASetProperty() throws {
        let realm = Self.realm()
        let source = MutableSet<String>()
        source.insert("a")
        try realm.write {
            let holder = realm.create(SetOrMixedHolder.self, value: ["any": ["x"], "tags": source, "labels": source])
            #expect(Array(holder.tags) == ["a"])
            #expect(Array(holder.labels) == ["a"])
            #expect(holder.any.listValue.map { Array($0) } == [.string("x")])
        }
    }
}
