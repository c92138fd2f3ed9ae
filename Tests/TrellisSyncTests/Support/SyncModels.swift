import Foundation
import Trellis

// The seeds' Device Sync models (Person/Dog, an embedded Address), and a Task with every
// collection kind for the conflict rules.

final class SyncDog: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<SyncPerson>
}

final class SyncAddress: EmbeddedObject {
    @Persisted var street: String?
    @Persisted var city: String?
}

final class SyncPerson: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var name = ""
    @Persisted var dog: SyncDog?
    @Persisted var dogs: List<SyncDog>
    @Persisted var address: SyncAddress?
    @Persisted var previousAddresses: List<SyncAddress>
}

final class SyncTask: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var owner = ""
    @Persisted var title = ""
    @Persisted var priority = 0
    @Persisted var steps: List<String>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

let syncModelTypes: [ObjectBase.Type] = [SyncDog.self, SyncPerson.self, SyncAddress.self, SyncTask.self]

/// A model whose properties are stored under other names (`propertiesMapping()`), with an
/// embedded object that maps its own.
final class SyncMappedNote: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var owner = ""
    @Persisted var text = ""
    @Persisted var place: SyncMappedPlace?

    override class func propertiesMapping() -> [String: String] { ["owner": "owner_id", "text": "body"] }
}

final class SyncMappedPlace: EmbeddedObject {
    @Persisted var city = ""

    override class func propertiesMapping() -> [String: String] { ["city": "city_name"] }
}

/// Custom user data for the permission tests (`%%user.custom_data.role`): one document per
/// user, found by `user_id`.
final class SyncUserProfile: Object {
    @Persisted(primaryKey: true) var _id = ObjectId.generate()
    @Persisted var user_id = ""
    @Persisted var role = ""
}
