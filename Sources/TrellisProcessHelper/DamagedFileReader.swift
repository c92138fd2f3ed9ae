import Foundation
import Trellis

// The model of Fuzz/Sources/FuzzFile (same class names and properties), to read back the
// damaged files the file fuzzer found (Tests/TrellisTests/FuzzRegressionTests.swift).
final class FuzzDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var owners: List<FuzzPerson>
}

final class FuzzPerson: Object {
    @Persisted var name = ""
    @Persisted var dog: FuzzDog?
    @Persisted var address: FuzzAddress?
    @Persisted(originProperty: "owners") var dogs: LinkingObjects<FuzzDog>
}

final class FuzzAddress: EmbeddedObject {
    @Persisted var street = ""
}

enum DamagedFileReader {
    /// Opens the file read-only and reads every object: prints `error: …` if opening throws,
    /// `read N objects` otherwise.
    static func read(path: String) {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                objectTypes: [FuzzDog.self, FuzzPerson.self, FuzzAddress.self])
        configuration.readOnly = true
        do {
            let realm = try Realm(configuration: configuration)
            var objects = 0
            for dog in realm.objects(FuzzDog.self) { objects += 1 + dog.name.count * 0 + dog.owners.count * 0 }
            for person in realm.objects(FuzzPerson.self) {
                objects += 1 + (person.dog?.id ?? 0) * 0 + (person.address?.street.count ?? 0) * 0
            }
            print("read \(objects) objects")
        } catch {
            print("error: \(error)")
        }
    }
}
