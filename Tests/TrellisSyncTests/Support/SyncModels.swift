import Foundation
import Trellis
// SyncTask, shared with TrellisSyncClientHelper; re-exported so that every file of the tests sees it.
@_exported import TrellisSyncTestModels

// The seeds' Device Sync models (Person/Dog, an embedded Address); the Task with every
// collection kind for the conflict rules is SyncTask (TrellisSyncTestModels).

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
