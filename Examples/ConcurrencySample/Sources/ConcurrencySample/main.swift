// One Realm per actor; frozen snapshots cross actors; changes arrive as an async sequence.
import Foundation
import Trellis

final class Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Person: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<Dog>
}

/// Owns the Realm: every write happens here.
actor Kennel {
    private var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func adopt(_ dogName: String, by personName: String, age: Int) async throws {
        try await realm.asyncWrite {
            let person = realm.objects(Person.self).filter("name == %@", personName).first
                ?? realm.create(Person.self, value: ["name": personName])
            person.dogs.append(Dog(value: ["name": dogName, "age": age]))
        }
    }

    /// A frozen snapshot: immutable, so it may leave the actor.
    func oldestDog() -> Frozen<Dog>? {
        realm.objects(Dog.self).sorted(byKeyPath: "age", ascending: false).first.map { Frozen($0.freeze()) }
    }

    func allDogs() -> Frozen<Results<Dog>> {
        Frozen(realm.objects(Dog.self).sorted(byKeyPath: "name").freeze())
    }
}

/// Reads what it is given; never opens the Realm itself.
actor Reporter {
    func describe(_ dog: Frozen<Dog>) -> String {
        let owners = dog.value.owners.map(\.name).joined(separator: ", ")
        return "\(dog.value.name) (\(dog.value.age)), owned by \(owners)"
    }

    func names(_ dogs: Frozen<Results<Dog>>) -> [String] { dogs.value.map(\.name) }
}

/// Watches the dogs on its own actor, with its own Realm.
actor Watcher {
    func waitForDogs(_ count: Int, configuration: Realm.Configuration) async throws -> Int {
        let realm = try await Realm.open(configuration: configuration)
        for await change in realm.objects(Dog.self).changes {
            switch change {
            case .initial(let dogs) where dogs.count >= count: return dogs.count
            case .update(let dogs, _, _, _) where dogs.count >= count: return dogs.count
            default: continue
            }
        }
        return realm.objects(Dog.self).count
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-sample-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("kennel.realm"),
                                        objectTypes: [Dog.self, Person.self])

let kennel = try await Kennel(configuration: configuration)
let watcher = Task { try await Watcher().waitForDogs(3, configuration: configuration) }
try await kennel.adopt("Rex", by: "Ana", age: 3)
try await kennel.adopt("Fido", by: "Ana", age: 7)
try await kennel.adopt("Bella", by: "Tim", age: 5)
print("watcher saw \(try await watcher.value) dogs")

let reporter = Reporter()
if let oldest = await kennel.oldestDog() {
    print("oldest: \(await reporter.describe(oldest))")
}
print("all: \(await reporter.names(await kennel.allDogs()).joined(separator: ", "))")
