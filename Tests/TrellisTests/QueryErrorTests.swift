import Foundation
import Testing
@testable import Trellis

/// Query text that does not fit the class: typed errors from `filter(validating:)`, traps with
/// the same message from `filter(_:)`.
@Suite struct QueryErrorTests {
    let folder = TemporaryFolder()

    func message(_ text: String, _ args: Any...) throws -> String? {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        do {
            _ = try realm.objects(Owner.self).filter(validating: text, arguments: args)
            return nil
        } catch {
            #expect(error.code == .invalidQuery)
            return error.message
        }
    }

    @Test func unknownPropertySuggestsTheNearestName() throws {
        #expect(try message("nmae == 'x'") == "Invalid predicate 'nmae == 'x'': No property 'nmae' on 'Owner'. Did you mean 'name'?")
        #expect(try message("dog.agee > 1") == "Invalid predicate 'dog.agee > 1': No property 'agee' on 'Pet'. Did you mean 'age'?")
        #expect(try message("zzzzzz == 1") == "Invalid predicate 'zzzzzz == 1': No property 'zzzzzz' on 'Owner'.")
    }

    @Test func collectionKeyPathsNeedAQuantifier() throws {
        #expect(try message("dogs.age > 5")?.contains("Key paths that include a collection property must use aggregate operations") == true)
        #expect(try message("dogs == %@", Pet())?.contains("must use aggregate operations") == true)
        #expect(try message("ANY dogs.age > 5") == nil)
    }

    @Test func operatorsMustSuitTheType() throws {
        #expect(try message("dog < %@", Pet()) == "Invalid predicate 'dog < %@': Operator '<' not supported for type 'object'")
        #expect(try message("age BEGINSWITH 'a'") == "Invalid predicate 'age BEGINSWITH 'a'': Operator 'BEGINSWITH' not supported for type 'int'")
        #expect(try message("name LIKE[d] 'a'") == "Invalid predicate 'name LIKE[d] 'a'': Operator 'LIKE' not supported with diacritic-insensitive modifier.")
        #expect(try message("age == 'abc'") == "Invalid predicate 'age == 'abc'': Expected object of type int for property 'age' on object of type 'Owner', but received: \"abc\"")
        #expect(try message("age BETWEEN {1}")?.contains("BETWEEN operator must compare a KeyPath with an aggregate with two values") == true)
    }

    @Test func aggregatesNeedACollection() throws {
        #expect(try message("age.@avg > 1") == "Invalid predicate 'age.@avg > 1': Invalid keypath 'age.@avg': Property 'Owner.age' is not a link or collection and can only appear at the end of a keypath.")
        #expect(try message("dogMap['a'].age > 1") == "Invalid predicate 'dogMap['a'].age > 1': Invalid keypath 'dogMap[\"a\"].age': Cannot apply key path to Map subscripts.")
        #expect(try message("@links.Nobody.dogs.@count > 1")?.contains("No class named 'Nobody'") == true)
    }

    @Test func objectFromAnotherRealmIsRejected() throws {
        let other = try Realm(configuration: folder.configuration([Owner.self, Pet.self], name: "other.realm"))
        let pet = Pet("Rex")
        try other.write { other.add(pet) }
        #expect(try message("dog == %@", pet) == "Invalid predicate 'dog == %@': Object must be from the Realm being queried")
    }

    @Test func invalidTextTrapsFromFilterWithThePosition() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
            _ = realm.objects(Owner.self).filter("age > > 3")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid predicate 'age > > 3' at offset 6: expected a property name or a value but found '>'."))
    }

    @Test func unknownPropertyTrapsFromWhere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
            _ = realm.objects(Owner.self).where { $0.age.avg > 3 }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // Realm's message, from running the query (it names the class).
        #expect(stderr.contains("Invalid keypath 'age.@avg': Property 'Owner.age' is not a link or collection"))
    }

    @Test func unsupportedArgumentTypeTrapsWithItsName() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Custom {}
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
            _ = realm.objects(Owner.self).filter("name == %@", Custom())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Unsupported query argument of type 'Custom'"))
    }
}
