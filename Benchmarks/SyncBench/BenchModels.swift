import Foundation
import Trellis

// The synced models of the benchmark: the seeds' Person and Dog with every relationship kind
// the sync mapping has (a link, a list of links, an embedded object, a list of embedded
// objects), and a small Ping for the commit -> notification round trips.

final class BenchDog: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<BenchPerson>
}

final class BenchAddress: EmbeddedObject {
    @Persisted var street: String?
    @Persisted var city: String?
}

final class BenchPerson: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var dog: BenchDog?
    @Persisted var dogs: List<BenchDog>
    @Persisted var address: BenchAddress?
    @Persisted var previousAddresses: List<BenchAddress>
}

final class BenchPing: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var round = 0
    /// The writer's user id (`SyncBench --load --owner-only`: the owner-only rule reads it).
    @Persisted var ownerId = ""
}

let benchTypes: [ObjectBase.Type] = [BenchDog.self, BenchPerson.self, BenchAddress.self, BenchPing.self]

/// Writes the App Services JSON schema of the models, as the server reads it.
func writeSchema(to url: URL) throws {
    let schema = try AppServicesSchema(objectTypes: benchTypes)
    let documents = try schema.collectionClassNames.map { String(decoding: try schema.jsonSchema(for: $0), as: UTF8.self) }
    try ("[" + documents.joined(separator: ",") + "]").write(to: url, atomically: true, encoding: .utf8)
}
