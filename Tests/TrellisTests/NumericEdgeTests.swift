import Foundation
import Testing
@testable import Trellis

final class NumberVal: Object {
    @Persisted var i = 0
    @Persisted var f: Float = 0
    @Persisted var d = 0.0
    @Persisted var ds: List<Double>
}

/// Issue 34, defect 6: numbers out of their type's range are refused at import, and aggregates
/// give realm-core's answers (`aggregate_ops.hpp`): NaN is skipped by `min`, `max`, `sum` and
/// `average`; an integer `sum` is a 64-bit sum that wraps (realm-core adds into an `int64_t`);
/// an integer `average` adds Doubles.
@Suite struct NumericEdgeTests {
    let folder = TemporaryFolder()

    func emptyFile() throws -> URL {
        let url = folder.file("numbers.realm")
        try onOtherThread { _ = try Realm(configuration: .init(fileURL: url, objectTypes: [NumberVal.self])) }
        return url
    }

    func importBoth(_ document: String) throws -> (stored: Realm.Error?, typed: Realm.Error?) {
        let url = try emptyFile()
        var stored: Realm.Error?, typed: Realm.Error?
        do { _ = try ExtendedJSON.importDocuments(["NumberVal": [Data(document.utf8)]], intoFile: url) } catch let e as Realm.Error { stored = e }
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [NumberVal.self]))
        try realm.write { realm.deleteAll() }
        do { try ExtendedJSON.importDocuments([Data(document.utf8)], as: NumberVal.self, into: realm) } catch let e as Realm.Error { typed = e }
        return (stored, typed)
    }

    @Test(arguments: [#"{"i": {"$numberInt": "2147483648"}}"#, #"{"i": {"$numberInt": "-2147483649"}}"#,
                      #"{"f": {"$numberDouble": "1e300"}}"#, #"{"f": 1e300}"#, #"{"f": {"$numberDouble": "-3.5e38"}}"#])
    func numbersOutOfTheirTypesRangeAreRefused(_ document: String) throws {
        let (stored, typed) = try importBoth(document)
        for error in [stored, typed] {
            #expect(error?.code == .invalidValue, "\(document)")
            #expect(error?.message.contains("In document 1 of 'NumberVal'") == true, "\(error?.message ?? "accepted")")
            #expect(error?.message.contains("does not fit 'NumberVal.") == true, "\(error?.message ?? "accepted")")
        }
    }

    @Test(arguments: [#"{"i": {"$numberInt": "2147483647"}}"#, #"{"i": {"$numberInt": "-2147483648"}}"#,
                      #"{"f": {"$numberDouble": "Infinity"}}"#, #"{"f": {"$numberDouble": "3.4e38"}}"#,
                      #"{"d": {"$numberDouble": "1e300"}}"#, #"{"i": {"$numberLong": "9223372036854775807"}}"#])
    func numbersAtTheEdgeOfTheirRangeAreImported(_ document: String) throws {
        let (stored, typed) = try importBoth(document)
        #expect(stored == nil, "\(stored?.message ?? "")")
        #expect(typed == nil, "\(typed?.message ?? "")")
    }

    /// Runs `body` with the aggregates read from the column copy, then from the rows.
    func bothPaths(_ realm: Realm, _ body: () -> Void) {
        realm.core.readsColumnCopies = true
        body()
        realm.core.readsColumnCopies = false
        body()
        realm.core.readsColumnCopies = true
    }

    @Test func anIntegerSumWrapsAsRealmsAndTheAverageDoesNot() throws {
        let realm = try Realm(configuration: .init(fileURL: try emptyFile(), objectTypes: [NumberVal.self]))
        try realm.write {
            realm.add(NumberVal(value: ["i": Int.max]))
            realm.add(NumberVal(value: ["i": Int.max]))
        }
        bothPaths(realm) {
            let all = realm.objects(NumberVal.self)
            #expect(all.sum(ofProperty: "i") as Int == -2)  // realm-core's int64_t sum
            #expect(all.average(ofProperty: "i") as Double? == 9.223372036854776e18)
            #expect(all.average(ofProperty: "i") as Int? == Int.max)
            #expect(all.filter("i > 0").average(ofProperty: "i") as Double? == 9.223372036854776e18)
        }
    }

    @Test func nanIsSkippedByEveryAggregateAsInRealm() throws {
        let realm = try Realm(configuration: .init(fileURL: try emptyFile(), objectTypes: [NumberVal.self]))
        try realm.write {
            for value in [Double.nan, 1, 3, .nan] {
                realm.add(NumberVal(value: ["d": value, "f": Float(value)]))
            }
            realm.add(NumberVal(value: ["ds": [Double.nan, 2, 5]]))
        }
        bothPaths(realm) {
            let all = realm.objects(NumberVal.self).filter("ds.@count == 0")
            for property in ["d", "f"] {
                #expect(all.min(ofProperty: property) as Double? == 1, "\(property)")
                #expect(all.max(ofProperty: property) as Double? == 3, "\(property)")
                #expect(all.sum(ofProperty: property) as Double == 4, "\(property)")
                #expect(all.average(ofProperty: property) as Double? == 2, "\(property)")
            }
            let full = realm.objects(NumberVal.self)
            #expect(full.min(ofProperty: "d") as Double? == 0)
            #expect(full.max(ofProperty: "d") as Double? == 3)
        }
        let list = try #require(realm.objects(NumberVal.self).filter("ds.@count > 0").first?.ds)
        #expect(list.min() == 2)
        #expect(list.max() == 5)
        #expect(list.sum() == 7)
        #expect(list.average() as Double? == 3.5)
        #expect(realm.objects(NumberVal.self).filter("ds.@min == 2 AND ds.@max == 5 AND ds.@sum == 7").count == 1)
        try realm.write { realm.add(NumberVal(value: ["ds": [Double.nan]])) }
        let onlyNaN = try #require(realm.objects(NumberVal.self).filter("ds.@count == 1").first?.ds)
        #expect(onlyNaN.min() == nil)
        #expect(onlyNaN.max() == nil)
    }
}
