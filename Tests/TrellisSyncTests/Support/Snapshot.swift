import Foundation
import Trellis

/// Every synced object of a Realm as canonical Extended JSON, sorted: two replicas are equal
/// when their snapshots are.
func snapshot(_ realm: Realm) throws -> [String] {
    var documents = [String]()
    for object in realm.objects(SyncDog.self) { documents.append("Dog " + text(try ExtendedJSON.document(for: object))) }
    for object in realm.objects(SyncPerson.self) {
        documents.append("Person " + text(try ExtendedJSON.document(for: object)))
    }
    for object in realm.objects(SyncTask.self) { documents.append("Task " + text(try ExtendedJSON.document(for: object))) }
    return documents.sorted()
}

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }
