import Foundation
import Testing
import Trellis

final class NullOrderItem: Object {
    @Persisted var name = ""
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optInt: Int?
    @Persisted var optDouble: Double?
    @Persisted var optDate: Date?
    @Persisted var optDecimal: Decimal128?
    @Persisted var anyCol: AnyRealmValue
    @Persisted var link: NullOrderItem?
}

/// nil in `<`, `<=`, `>`, `>=` as realm-core (v14) answers it. A String or Data property
/// compared with a constant orders nil before every value (its StringData and BinaryData order:
/// Realm's QueryTests.testStringComparisons expects `optStringCol > nil` to match "Foó"); every
/// other comparison (numbers, dates, `AnyRealmValue`, a value reached through a link) orders nil
/// with nothing, but two nils are `<=` and `>=` each other. Typed queries and predicate text
/// agree. Before, nil ordered with nothing at all, nil with nil included.
@Suite struct RealmQueryNullOrderTests {
    let folder = TemporaryFolder()

    /// "set" holds a value in every property, "empty" nil (`.none`); each links to the other.
    private func filledRealm() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([NullOrderItem.self]))
        try realm.write {
            let set = NullOrderItem()
            set.name = "set"
            set.optString = "Foó"
            set.optData = Data(count: 4)
            set.optInt = 3
            set.optDouble = 234.567
            set.optDate = Date(timeIntervalSince1970: 2_000_000)
            set.optDecimal = Decimal128(234.567)
            set.anyCol = .string("Foó")
            let empty = NullOrderItem()
            empty.name = "empty"
            set.link = empty
            empty.link = set
            realm.add([set, empty])
        }
        return realm
    }

    private func names(_ results: Results<NullOrderItem>) -> [String] { results.map(\.name).sorted() }

    @Test func aStringPropertyOrdersNilBeforeEveryString() throws {
        let realm = try filledRealm()
        let items = realm.objects(NullOrderItem.self)
        #expect(names(items.where { $0.optString > nil }) == ["set"])
        #expect(names(items.where { $0.optString >= nil }) == ["empty", "set"])
        #expect(names(items.where { $0.optString < nil }) == [])
        #expect(names(items.where { $0.optString <= nil }) == ["empty"])
        #expect(names(items.where { $0.optString < "Foó" }) == ["empty"])
        #expect(names(items.where { $0.optString <= "Foó" }) == ["empty", "set"])
        #expect(names(items.where { $0.optString > "A" }) == ["set"])
        #expect(names(items.where { $0.optString >= "" }) == ["set"])
        #expect(names(items.filter("optString > nil")) == ["set"])
        #expect(names(items.filter("optString >= nil")) == ["empty", "set"])
        #expect(names(items.filter("optString < %@", "Foó")) == ["empty"])
        #expect(names(items.filter("nil < optString")) == ["set"])
    }

    @Test func aDataPropertyOrdersNilBeforeEveryValue() throws {
        let realm = try filledRealm()
        let items = realm.objects(NullOrderItem.self)
        #expect(names(items.filter("optData > nil")) == ["set"])
        #expect(names(items.filter("optData >= nil")) == ["empty", "set"])
        #expect(names(items.filter("optData < %@", Data(count: 1))) == ["empty"])
        #expect(names(items.filter("optData <= nil")) == ["empty"])
    }

    @Test func numbersAndDatesOrderNilWithNothingButNil() throws {
        let realm = try filledRealm()
        let items = realm.objects(NullOrderItem.self)
        // Realm's QueryTests.testNumericComparisons: a value against nil never matches.
        #expect(names(items.where { $0.optInt > nil }) == [])
        #expect(names(items.where { $0.optInt < nil }) == [])
        #expect(names(items.where { $0.optInt >= nil }) == ["empty"])
        #expect(names(items.where { $0.optInt <= nil }) == ["empty"])
        #expect(names(items.where { $0.optInt < 5 }) == ["set"])
        #expect(names(items.where { $0.optDouble >= nil }) == ["empty"])
        #expect(names(items.where { $0.optDate <= nil }) == ["empty"])
        #expect(names(items.where { $0.optDecimal >= nil }) == ["empty"])
        #expect(names(items.where { $0.optDecimal > nil }) == [])
        #expect(names(items.filter("optInt >= nil")) == ["empty"])
        #expect(names(items.filter("optDate > nil")) == [])
        #expect(names(items.filter("optDouble <= %@", 1000)) == ["set"])
    }

    @Test func anyRealmValueOrdersNilWithNothingButNil() throws {
        let realm = try filledRealm()
        let items = realm.objects(NullOrderItem.self)
        #expect(names(items.where { $0.anyCol >= .none }) == ["empty"])
        #expect(names(items.where { $0.anyCol > .none }) == [])
        #expect(names(items.where { $0.anyCol < .string("zzz") }) == ["set"])
        #expect(names(items.filter("anyCol <= nil")) == ["empty"])
        #expect(names(items.filter("anyCol < 'zzz'")) == ["set"])
    }

    @Test func aStringReachedThroughALinkOrdersNilWithNothingButNil() throws {
        let realm = try filledRealm()
        let items = realm.objects(NullOrderItem.self)
        // "set" links to "empty" (nil string), "empty" to "set" ("Foó").
        #expect(names(items.where { $0.link.optString < "Foó" }) == [])
        #expect(names(items.where { $0.link.optString >= nil }) == ["set"])
        #expect(names(items.where { $0.link.optString > nil }) == [])
        #expect(names(items.filter("link.optString <= nil")) == ["set"])
    }
}
