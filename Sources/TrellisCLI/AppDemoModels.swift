import Foundation
import Trellis

/// The seeds' Device Sync models (seed 003): every top-level class has an `_id` primary key,
/// so the App Services schema and Extended JSON can name linked objects. The demo writes them
/// to `app.realm` for the schema and export commands.
enum AppDemo {
    final class Person: Object {
        override class func className() -> String { "Person" }
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var dog: Dog?
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
    }

    final class Dog: Object {
        override class func className() -> String { "Dog" }
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var age = 0
    }

    final class DogClub: Object {
        override class func className() -> String { "DogClub" }
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var members: List<Person>
    }

    final class Address: EmbeddedObject {
        override class func className() -> String { "Address" }
        @Persisted var city: String?
        @Persisted var country: String?
    }

    static let types: [ObjectBase.Type] = [Person.self, Dog.self, DogClub.self, Address.self]

    /// Writes the app's objects to `url`, and an empty file with the same schema to `empty`.
    static func write(to url: URL, empty: URL) throws {
        for file in [url, empty] {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(atPath: file.path + "-lock")
        }
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: types))
        try realm.write {
            let rex = Dog(value: ["name": "Rex", "age": 3])
            let tim = Person(value: ["name": "Tim", "address": ["city": "Oslo", "country": "Norway"]])
            tim.dog = rex
            tim.dogs.append(rex)
            let ana = Person(value: ["name": "Ana", "address": ["city": "Lisbon"]])
            ana.dogs.append(Dog(value: ["name": "Fido", "age": 5]))
            let club = DogClub(value: ["name": "Sprinters"])
            club.members.append(objectsIn: [tim, ana])
            realm.add(club)
        }
        _ = try Realm(configuration: .init(fileURL: empty, objectTypes: types))
    }
}
