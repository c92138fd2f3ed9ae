import Foundation
import Testing
@testable import Trellis

class IndexedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted(indexed: true) var born = Date(timeIntervalSince1970: 0)
    @Persisted(indexed: true) var tag: String?
    @Persisted var weight = 0.0
}

/// Equality, IN and ranges on primary keys and `indexed:` properties are answered from the
/// index, with the same results as a scan; the index follows every write.
@Suite struct QueryIndexTests {
    let folder = TemporaryFolder()

    func candidates(_ results: Results<IndexedDog>) throws -> Int? {
        ResultsPipeline(core: results.core, table: try #require(results.table)).indexedCandidates(results.steps)?.count
    }

    func populate(_ realm: Realm, count: Int = 200) throws {
        try realm.write {
            for id in 0..<count {
                let dog = IndexedDog()
                dog.id = id
                dog.name = "dog\(id % 37)"
                dog.age = id % 20
                dog.born = Date(timeIntervalSince1970: Double(id) * 86_400 - 50 * 86_400)
                dog.tag = id % 3 == 0 ? nil : "t\(id % 5)"
                dog.weight = Double(id) / 10
                realm.add(dog)
            }
        }
    }

    @Test func indexedComparisonsReadOnlyTheMatchingEntries() throws {
        let realm = try Realm(configuration: folder.configuration([IndexedDog.self]))
        try populate(realm)
        let dogs = realm.objects(IndexedDog.self)
        let all = Array(dogs)
        func check(_ text: String, _ args: Any..., expectedCandidates: Int, _ reference: (IndexedDog) -> Bool) throws {
            let results = try dogs.filter(validating: text, arguments: args)
            let found = try candidates(results)
            #expect(found == expectedCandidates, "\(text): \(String(describing: found))")
            #expect(results.map(\.id) == all.filter(reference).map(\.id), "\(text)")
            // Counted on fresh results too.
            #expect(try dogs.filter(validating: text, arguments: args).count == all.filter(reference).count, "\(text)")
        }
        try check("name == 'dog5'", expectedCandidates: 6) { $0.name == "dog5" }
        try check("name IN {'dog5', 'dog6', 'nope'}", expectedCandidates: 12) { ["dog5", "dog6"].contains($0.name) }
        try check("age == 3", expectedCandidates: 10) { $0.age == 3 }
        try check("age > 17", expectedCandidates: 30) { $0.age > 17 }
        try check("age >= 18 AND weight < 10", expectedCandidates: 20) { $0.age >= 18 && $0.weight < 10 }
        // Range bounds are read inclusively from the index; the filter then drops the bound itself.
        try check("age < 2 OR age BETWEEN {18, 19}", expectedCandidates: 50) { $0.age < 2 || (18...19).contains($0.age) }
        try check("tag == nil", expectedCandidates: 67) { $0.tag == nil }
        try check("tag == 't1'", expectedCandidates: 27) { $0.tag == "t1" }
        try check("born < %@", Date(timeIntervalSince1970: -40 * 86_400), expectedCandidates: 11) {
            $0.born < Date(timeIntervalSince1970: -40 * 86_400)
        }
        try check("id BETWEEN {10, 19}", expectedCandidates: 10) { (10...19).contains($0.id) }
        try check("id > 195", expectedCandidates: 5) { $0.id > 195 }
        try check("id IN %@ AND age == 1", [1, 21, 22], expectedCandidates: 2) { [1, 21, 22].contains($0.id) && $0.age == 1 }
        #expect(try candidates(dogs.filter("weight > 1")) == nil)
        #expect(try candidates(dogs.filter("age > 1 OR weight > 1")) == nil)
    }

    @Test func indexFollowsUpdatesDeletesAndUpserts() throws {
        let realm = try Realm(configuration: folder.configuration([IndexedDog.self]))
        try populate(realm, count: 50)
        let dogs = realm.objects(IndexedDog.self)
        try realm.write {
            for dog in dogs.filter("age == 3") { dog.age = 33 }
            realm.delete(dogs.filter("name == 'dog7'"))
            realm.create(IndexedDog.self, value: ["id": 5, "name": "renamed", "age": 40], update: .modified)
            dogs.filter("id == 6").first?.tag = nil
        }
        #expect(dogs.filter("age == 3").count == 0)
        #expect(dogs.filter("age == 33").map(\.id) == [3, 23, 43])
        #expect(dogs.filter("name == 'dog7'").count == 0)
        #expect(dogs.filter("name == 'renamed' AND age >= 40").map(\.id) == [5])
        #expect(dogs.filter("tag == nil AND id == 6").count == 1)
        #expect(realm._consistencyProblems().isEmpty)
        try realm.write { realm.deleteAll() }
        #expect(dogs.filter("age == 33").count == 0)
        try populate(realm, count: 10)
        #expect(dogs.filter("age == 3").map(\.id) == [3])
        #expect(realm._consistencyProblems().isEmpty)
    }
}
