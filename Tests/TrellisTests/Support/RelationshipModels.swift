import Foundation
import Trellis

// The canonical relationship model of REALM_BEHAVIORS.md (Person/Dog there; Owner/Pet here so
// the seed's own Person/Dog keep their names).
class Pet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dog") var owners: LinkingObjects<Owner>
    @Persisted(originProperty: "dogs") var listOwners: LinkingObjects<Owner>

    convenience init(_ name: String, age: Int = 0) {
        self.init()
        self.name = name
        self.age = age
    }
}

class Owner: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var dog: Pet?
    @Persisted var dogs: List<Pet>
    @Persisted var dogSet: MutableSet<Pet>
    @Persisted var dogMap: Map<String, Pet?>
    @Persisted var children: List<Owner>
    @Persisted(originProperty: "children") var parents: LinkingObjects<Owner>
    @Persisted var tags: List<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var nicknames: Map<String, String>

    convenience init(_ name: String, age: Int = 0) {
        self.init()
        self.name = name
        self.age = age
    }
}

class Parent: Object {
    @Persisted(primaryKey: true) var pk = 0
    @Persisted var child: Child?
    @Persisted var children: List<Child>
    @Persisted var childMap: Map<String, Child?>
}

class Child: EmbeddedObject {
    @Persisted var value = 0
    @Persisted var grandchild: Grandchild?
    @Persisted var grandchildren: List<Grandchild>
    @Persisted var favorite: Pet?
    @Persisted(originProperty: "child") var viaLink: LinkingObjects<Parent>
    @Persisted(originProperty: "children") var viaList: LinkingObjects<Parent>

    convenience init(_ value: Int) {
        self.init()
        self.value = value
    }
}

class Grandchild: EmbeddedObject {
    @Persisted var value = 0
}

class PKTeam: Object {
    @Persisted(primaryKey: true) var pk = ""
    @Persisted var dogs: List<PKDog>
    @Persisted var dogSet: MutableSet<PKDog>
}

// Invalid relationship declarations (each a schema error).
class OptionalListElement: Object { @Persisted var dogs: List<Pet?> }
class OptionalSetElement: Object { @Persisted var dogs: MutableSet<Pet?> }
class RequiredMapValue: Object { @Persisted var dogs: Map<String, Pet> }
class EmbeddedSet: Object { @Persisted var children: MutableSet<Child> }
class MissingOrigin: Object { @Persisted(originProperty: "nosuch") var owners: LinkingObjects<Owner> }
class OriginNotALink: Object { @Persisted(originProperty: "age") var owners: LinkingObjects<Owner> }
class OriginLinksElsewhere: Object { @Persisted(originProperty: "dog") var owners: LinkingObjects<Owner> }

// The seeds' Swift examples, exactly as written (each in its own namespace: the seeds reuse
// class names between examples).
enum SeedToMany {
    class Person: Object {
        @Persisted var name: String = ""
        @Persisted var birthdate: Date = Date(timeIntervalSince1970: 1)

        // A person can have many dogs
        @Persisted var dogs: List<Dog>
    }

    class Dog: Object {
        @Persisted var name: String = ""
        @Persisted var age: Int = 0
        @Persisted var breed: String?
        // No backlink to person -- one-directional relationship
    }
}

enum SeedInverse {
    class User: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var _partition: String = ""
        @Persisted var name: String = ""

        // A user can have many tasks.
        @Persisted var tasks: List<Task>
    }

    class Task: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var _partition: String = ""
        @Persisted var text: String = ""

        // Backlink to the user. This is automatically updated whenever
        // this task is added to or removed from a user's task list.
        @Persisted(originProperty: "tasks") var assignee: LinkingObjects<User>
    }
}

enum SeedEmbedded {
    class Person: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""

        // To-many relationship - a person can have many dogs
        @Persisted var dogs: List<Dog>

        // Inverse relationship - a person can be a member of many clubs
        @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>

        // Embed a single object.
        // Embedded object properties must be marked optional.
        @Persisted var address: Address?

        convenience init(name: String, address: Address) {
            self.init()
            self.name = name
            self.address = address
        }
    }

    class DogClub: Object {
        @Persisted var name = ""
        @Persisted var members: List<Person>

        // DogClub has an array of regional office addresses.
        // These are embedded objects.
        @Persisted var regionalOfficeAddresses: List<Address>

        convenience init(name: String, addresses: [Address]) {
            self.init()
            self.name = name
            self.regionalOfficeAddresses.append(objectsIn: addresses)
        }
    }

    class Address: EmbeddedObject {
        @Persisted var street: String?
        @Persisted var city: String?
        @Persisted var country: String?
        @Persisted var postalCode: String?
    }

    class Dog: Object {
        @Persisted var name: String = ""
        @Persisted var age: Int = 0
        @Persisted var breed: String?
    }
}

// The legacy declaration of an inverse relationship (a `let`, no `@Persisted`).
class LegacyTask: Object {
    @Persisted var text = ""
    let assignee = LinkingObjects(fromType: LegacyUser.self, property: "tasks")
}

class LegacyUser: Object {
    @Persisted var name = ""
    @Persisted var tasks: List<LegacyTask>
    @Persisted var favorite: LegacyTask?
}
