import Foundation
import Trellis
import TrellisSync

// The two-client demo of Scripts/sync-demo.sh, on the seeds' Person and Dog models:
//   TrellisSyncDemo schema FILE          writes the App Services schema the server needs
//   TrellisSyncDemo run BASE_URL FOLDER  two clients edit offline and converge

final class Dog: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Person: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var dog: Dog?
    @Persisted var dogs: List<Dog>
}

let types: [ObjectBase.Type] = [Person.self, Dog.self]

func fail(_ message: String) -> Never {
    print("sync-demo: \(message)")
    exit(1)
}

/// One client: a user, a file, a Realm confined to its own queue.
final class Client: @unchecked Sendable {
    let name: String
    let configuration: Realm.Configuration
    let queue: DispatchQueue
    var realm: Realm?

    init(_ name: String, app: App, folder: URL) async throws {
        self.name = name
        let user = try await app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
            subs.append(QuerySubscription<Person>(name: "people"))
            subs.append(QuerySubscription<Dog>(name: "dogs"))
        })
        configuration.fileURL = folder.appendingPathComponent("\(name).realm")
        configuration.objectTypes = types
        self.configuration = configuration
        queue = DispatchQueue(label: name)
        print("\(name): logged in anonymously as user \(user.id)")
    }

    func run<T>(_ body: (Realm) throws -> T) throws -> T {
        try queue.sync {
            if realm == nil { realm = try Realm(configuration: configuration, queue: queue) }
            guard let realm else { fail("no Realm") }
            realm.refresh()
            return try body(realm)
        }
    }

    var session: SyncSession {
        get throws {
            guard let session = try run({ $0.syncSession }) else { fail("no sync session") }
            return session
        }
    }

    func sync() async throws {
        let session = try self.session
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
    }

    /// Every object, as canonical Extended JSON, sorted.
    func documents() throws -> [String] {
        try run { realm in
            var documents = [String]()
            for person in realm.objects(Person.self) {
                documents.append(String(decoding: try ExtendedJSON.document(for: person), as: UTF8.self))
            }
            for dog in realm.objects(Dog.self) {
                documents.append(String(decoding: try ExtendedJSON.document(for: dog), as: UTF8.self))
            }
            return documents.sorted()
        }
    }

    func describe() throws -> String {
        try run { realm in
            realm.objects(Person.self).sorted(byKeyPath: "name").map { person in
                "\(person.name) (dogs: \(person.dogs.map { "\($0.name), \($0.age)" }.joined(separator: "; ")))"
            }.joined(separator: " | ")
        }
    }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "schema":
    guard arguments.count == 3 else { fail("usage: TrellisSyncDemo schema FILE") }
    let schema = try AppServicesSchema(objectTypes: types)
    let documents = try schema.collectionClassNames.map { String(decoding: try schema.jsonSchema(for: $0), as: UTF8.self) }
    try ("[" + documents.joined(separator: ",") + "]").write(toFile: arguments[2], atomically: true, encoding: .utf8)
case "run":
    guard arguments.count == 4 else { fail("usage: TrellisSyncDemo run BASE_URL FOLDER") }
    let folder = URL(fileURLWithPath: arguments[3])
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    // Two devices: each its own app folder (users file), so each logs in as its own anonymous user.
    func app(_ device: String) -> App {
        App(id: "trellis", configuration: AppConfiguration(baseURL: arguments[2],
                                                           rootDirectory: folder.appendingPathComponent(device)))
    }
    let a = try await Client("client A", app: app("device-a"), folder: folder)
    let b = try await Client("client B", app: app("device-b"), folder: folder)

    let rexId = ObjectId.generate()
    try a.run { realm in
        try realm.write {
            let rex = Dog(value: ["_id": rexId, "name": "Rex", "age": 3])
            realm.add(Person(value: ["name": "Ana", "dog": rex, "dogs": [rex]]))
        }
    }
    print("client A: added Ana with her dog Rex (local write, queued in the same transaction)")
    try await a.sync()
    print("client A: uploaded and acknowledged")
    try await b.sync()
    print("client B: downloaded: \(try b.describe())")

    try a.session.suspend()
    try b.session.suspend()
    print("both clients: offline (sessions suspended)")
    try a.run { realm in
        try realm.write {
            realm.object(ofType: Dog.self, forPrimaryKey: rexId)?.name = "Max"
            realm.objects(Person.self).first?.dogs.append(Dog(value: ["name": "Fido", "age": 1]))
        }
    }
    print("client A (offline): renamed Rex to Max, added Fido: \(try a.describe())")
    try b.run { realm in
        try realm.write {
            realm.object(ofType: Dog.self, forPrimaryKey: rexId)?.age = 4
            let ana = realm.objects(Person.self).first
            ana?.name = "Ana Maria"
            ana?.dogs.append(Dog(value: ["name": "Bella", "age": 2]))
            realm.add(Person(value: ["name": "Bo"]))
        }
    }
    print("client B (offline): Rex is 4 now, renamed Ana to Ana Maria, added Bella and Bo: \(try b.describe())")

    try a.session.resume()
    try b.session.resume()
    print("both clients: online again")
    try await a.sync()
    try await b.sync()
    try await a.sync()
    print("client A: \(try a.describe())")
    print("client B: \(try b.describe())")
    let left = try a.documents()
    let right = try b.documents()
    guard left == right else {
        print("client A documents:\n" + left.joined(separator: "\n"))
        print("client B documents:\n" + right.joined(separator: "\n"))
        fail("the clients did not converge")
    }
    print("converged: \(left.count) objects on both clients")
default:
    fail("usage: TrellisSyncDemo schema FILE | run BASE_URL FOLDER")
}
