import Foundation
import Testing
import Trellis

final class NestedEqualityHolder: Object {
    @Persisted var name = ""
    @Persisted var anyCol: AnyRealmValue
}

/// `anyCol == .list(…)` and `anyCol == .dictionary(…)`, as Realm's QueryTests
/// (testEqualAnyRealmList, testEqualAnyRealmDictionary) expect them to match. Realm passes such
/// a value to realm-core as a bare "list" or "dictionary" Mixed, and realm-core's Mixed compares
/// two collections by kind alone: a list equals every list, whatever either holds, and differs
/// from a dictionary and from every other value. Before, a nested collection equalled nothing.
@Suite struct RealmQueryNestedCollectionEqualityTests {
    let folder = TemporaryFolder()

    private func filledRealm() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([NestedEqualityHolder.self]))
        try realm.write {
            let values: [(String, AnyRealmValue)] = [
                ("list", .fromArray([.int(123)])), ("dictionary", .fromDictionary(["key": .int(123)])),
                ("int", .int(123)), ("none", .none),
            ]
            for (name, value) in values {
                let holder = NestedEqualityHolder()
                holder.name = name
                holder.anyCol = value
                realm.add(holder)
            }
        }
        return realm
    }

    private func names(_ results: Results<NestedEqualityHolder>) -> [String] { results.map(\.name).sorted() }

    private func list(_ values: AnyRealmValue...) -> AnyRealmValue {
        let list = List<AnyRealmValue>()
        list.append(objectsIn: values)
        return .list(list)
    }

    private func dictionary(_ value: AnyRealmValue) -> AnyRealmValue {
        let map = Map<String, AnyRealmValue>()
        map["key"] = value
        return .dictionary(map)
    }

    @Test func aListEqualsEveryListAndNothingElse() throws {
        let realm = try filledRealm()
        let holders = realm.objects(NestedEqualityHolder.self)
        #expect(names(holders.where { $0.anyCol == list(.int(123)) }) == ["list"])
        #expect(names(holders.where { $0.anyCol == list(.string("FooBar"), .none) }) == ["list"])
        #expect(names(holders.where { $0.anyCol != list(.int(123)) }) == ["dictionary", "int", "none"])
        #expect(names(holders.filter("anyCol == %@", list(.int(123)))) == ["list"])
        #expect(names(holders.where { $0.anyCol >= list() }) == ["list"])
    }

    @Test func aDictionaryEqualsEveryDictionaryAndNothingElse() throws {
        let realm = try filledRealm()
        let holders = realm.objects(NestedEqualityHolder.self)
        #expect(names(holders.where { $0.anyCol == dictionary(.int(123)) }) == ["dictionary"])
        #expect(names(holders.where { $0.anyCol == dictionary(.bool(true)) }) == ["dictionary"])
        #expect(names(holders.where { $0.anyCol != dictionary(.int(123)) }) == ["int", "list", "none"])
        #expect(names(holders.filter("anyCol == %@", dictionary(.none))) == ["dictionary"])
    }
}
