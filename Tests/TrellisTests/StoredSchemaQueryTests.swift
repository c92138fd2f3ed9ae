import Foundation
import Testing
@testable import Trellis

/// Queries by the schema stored in a file (no model classes): the same answers as the model
/// queries, sorting and limits, and typed errors for bad predicates and classes.
@Suite struct StoredSchemaQueryTests {
    let evaluation = QueryEvaluationTests()

    /// The `name` of each document, in order.
    func names(_ documents: [Data]) throws -> [String] {
        try documents.map { data in
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return try #require(object["name"] as? String)
        }
    }

    func fileURL(_ realm: Realm) -> URL { URL(fileURLWithPath: realm.core.environmentPath) }

    static let ownerPredicates = [
        "age > 20", "age BETWEEN {9, 45}", "name BEGINSWITH 'A' OR name ENDSWITH[c] 'B'", "name LIKE '?a*'",
        "dog.age > 10", "dog == nil", "dog.name == 'Rex'", "ANY dogs.age > 10", "ALL dogs.age > 10",
        "NONE dogs.age > 10", "dogs.@count == 2", "dogs.@sum.age > 12", "dogs.@avg.age < 10",
        "ANY dogSet.name == 'Rex'", "dogMap['best'] != nil", "ANY dogMap.@allValues.age == 5",
        "ANY children.name == 'Dave'", "parents.@count > 0", "ANY parents.name == 'Bob'",
        "SUBQUERY(children, $c, $c.age >= 10).@count == 1", "ANY tags BEGINSWITH[c] 'k'", "ANY tags ==[cd] 'cafe'",
        "ANY scores > 4", "scores.@count == 1", "nicknames['short'] == 'Al'", "ANY nicknames.@allKeys == 'short'",
        "@links.Owner.children.@count == 2", "@links.@count > 0", "TRUEPREDICATE", "FALSEPREDICATE",
        "NOT (age < 20 AND dog != nil)",
    ]

    static let petPredicates = [
        "owners.@count == 1", "ANY listOwners.name == 'Alice'", "listOwners.@count == 0", "age >= 5",
        "ANY @links.Owner.dogSet.age == 30", "@links.Owner.dogMap.@count > 0",
    ]

    @Test(arguments: ownerPredicates)
    func ownerQueryGivesTheModelQuerysAnswer(_ predicate: String) throws {
        let realm = try evaluation.fixture()
        let expected = realm.objects(Owner.self).filter(predicate).map(\.name)
        let found = try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Owner", predicate: predicate)
        #expect(try names(found) == Array(expected))
    }

    @Test(arguments: petPredicates)
    func petQueryGivesTheModelQuerysAnswer(_ predicate: String) throws {
        let realm = try evaluation.fixture()
        let expected = realm.objects(Pet.self).filter(predicate).map(\.name)
        let found = try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Pet", predicate: predicate)
        #expect(try names(found) == Array(expected))
    }

    @Test func sortsByAPropertyOrThroughALinkAndLimits() throws {
        let realm = try evaluation.fixture()
        let url = fileURL(realm)
        #expect(try names(StoredSchemaQuery.documents(inFile: url, className: "Owner", sortedBy: "age",
                                                      ascending: false, limit: 2)) == ["Carol", "Bob"])
        let byDogAge = realm.objects(Owner.self).sorted(byKeyPath: "dog.age").map(\.name)
        #expect(try names(StoredSchemaQuery.documents(inFile: url, className: "Owner", sortedBy: "dog.age"))
            == Array(byDogAge))
        #expect(try StoredSchemaQuery.documents(inFile: url, className: "Owner", limit: 0).isEmpty)
    }

    @Test func documentsAreTheExtendedJSONOfTheObjects() throws {
        let realm = try evaluation.fixture()
        let found = try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Owner", predicate: "name == 'Alice'")
        let alice = try #require(found.first.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(alice["age"] as? [String: String] == ["$numberLong": "30"])
        #expect(alice["tags"] as? [String] == ["brave", "Kind"])
        // Pet has no primary key: a link shows the class and object key.
        let dog = try #require(alice["dog"] as? [String: Any])
        #expect(dog["$ref"] as? String == "Pet")
    }

    @Test func aPredicateThatDoesNotParseIsAnInvalidQueryErrorWithItsOffset() throws {
        let realm = try evaluation.fixture()
        #expect {
            try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Owner", predicate: "age > > 3")
        } throws: { error in
            guard let error = error as? Realm.Error else { return false }
            return error.code == .invalidQuery && error.localizedDescription.contains("at offset 6")
        }
    }

    @Test func anUnknownPropertyIsAnInvalidQueryErrorNamingTheClass() throws {
        let realm = try evaluation.fixture()
        #expect {
            try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Owner", predicate: "agee > 3")
        } throws: { error in
            guard let error = error as? Realm.Error else { return false }
            return error.code == .invalidQuery && error.localizedDescription.contains("No property 'agee' on 'Owner'")
                && error.localizedDescription.contains("Did you mean 'age'?")
        }
    }

    @Test func anUnknownClassIsAnInvalidValueErrorListingTheClasses() throws {
        let realm = try evaluation.fixture()
        #expect {
            try StoredSchemaQuery.documents(inFile: fileURL(realm), className: "Cat")
        } throws: { error in
            guard let error = error as? Realm.Error else { return false }
            return error.code == .invalidValue && error.localizedDescription.contains("has no class 'Cat'")
                && error.localizedDescription.contains("Owner, Pet")
        }
    }
}
