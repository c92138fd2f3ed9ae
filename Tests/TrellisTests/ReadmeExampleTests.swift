import Foundation
import Testing
@testable import Trellis

/// The README's example, kept compiling and true.
@Suite struct ReadmeExampleTests {
    class Dog: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var age: Int?
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    }
    class Person: Object {
        @Persisted var name = ""
        @Persisted var dog: Dog?
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
    }
    class Address: EmbeddedObject {
        @Persisted var city: String?
    }

    @Test func readmeExampleWritesAGraphAndFollowsTheLink() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Person.self, Dog.self, Address.self]))
        try realm.write {
            let person = Person(value: ["name": "Tim", "dog": ["name": "Rex", "age": 3], "address": ["city": "Oslo"]])
            person.dogs.append(Dog(value: ["name": "Fido"]))
            realm.add(person)
        }
        let owner = try #require(realm.objects(Person.self).first)
        #expect(owner.dog?.name == "Rex")
        #expect(owner.dog?.age == 3)
        #expect(owner.address?.city == "Oslo")
        #expect(realm.objects(Dog.self).count == 2)
        #expect(owner.dogs[0].name == "Fido")
        #expect(owner.dogs[0].owners.first?.name == "Tim")
    }
}
