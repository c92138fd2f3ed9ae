import Foundation
import Testing
@testable import Trellis

/// A map of dogs whose backlinks are declared the legacy way.
class LegacyKennel: Object {
    @Persisted var dogMap: Map<String, LegacyDog?>
}

/// A legacy `let owners = LinkingObjects(fromType:property:)` is a property like
/// `@Persisted(originProperty:)`: in the schema, by name (`obj["owners"]`) and in key paths
/// (realm-swift ObjectTests `testBacklinkPropertyKeyPathNotifications1…5`, whose
/// `SwiftDogObject.owners` is declared this way).
@Suite struct LegacyLinkingObjectsKeyPathTests {
    let folder = TemporaryFolder()

    func setUp() throws -> (Realm, LegacyPerson, LegacyDog) {
        let realm = try Realm(configuration: folder.configuration([LegacyPerson.self, LegacyDog.self,
                                                                   LegacyKennel.self]))
        let person = LegacyPerson()
        person.name = "Ann"
        let dog = LegacyDog()
        dog.name = "Rex"
        person.dogs.append(dog)
        try realm.write { realm.add(person) }
        return (realm, person, dog)
    }

    @Test func theLegacyDeclarationIsAComputedPropertyReadByName() throws {
        let (realm, _, dog) = try setUp()
        let computed = try #require(realm.schema["LegacyDog"]?.computedProperties.first)
        #expect(computed.name == "owners" && computed.type == .linkingObjects)
        #expect(computed.objectClassName == "LegacyPerson" && computed.linkOriginPropertyName == "dogs")
        let owners = try #require(dog["owners"] as? LinkingObjects<LegacyPerson>)
        #expect(owners.map(\.name) == ["Ann"])
        #expect(dog.owners.map(\.name) == ["Ann"])
        #expect((LegacyDog()["owners"] as? LinkingObjects<LegacyPerson>)?.count == 0)
        #expect(realm.objects(LegacyDog.self).filter("ANY owners.name == 'Ann'").count == 1)
    }

    @Test func theLegacyDeclarationIsAnObservableKeyPath() throws {
        let (realm, person, dog) = try setUp()
        var changes: [[String]] = []
        let owners = dog.observe(keyPaths: ["owners"]) { change in
            if case .change(_, let properties) = change { changes.append(properties.map(\.name)) }
        }
        var nameChanges = 0
        let ownerNames = dog.observe(keyPaths: ["owners.name"]) { change in
            if case .change = change { nameChanges += 1 }
        }
        try realm.write { dog.name = "Fido" }           // neither
        try realm.write { person.name = "Tom" }         // owners.name only
        try realm.write {                               // a new owner: both
            let other = LegacyPerson()
            realm.add(other)
            other.dogs.append(dog)
        }
        #expect(changes == [["owners"]])
        #expect(nameChanges == 2)
        owners.invalidate()
        ownerNames.invalidate()
    }

    /// realm-swift MapTests `testObserveKeyPathBacklink`: `dogMap.observe(keyPaths: ["owners.name"])`.
    @Test func aMapReportsTheKeyWhoseValuesLegacyBacklinkChanged() throws {
        let (realm, person, dog) = try setUp()
        let kennel = LegacyKennel()
        try realm.write {
            realm.add(kennel)
            kennel.dogMap["first"] = dog
            kennel.dogMap["second"] = LegacyDog()
        }
        var entries: [String] = []
        let token = kennel.dogMap.observe(keyPaths: ["owners.name"]) { change in
            switch change {
            case .initial(let map): entries.append("initial \(map.count)")
            case .update(_, let deletions, let insertions, let modifications):
                entries.append("d\(deletions) i\(insertions) m\(modifications)")
            case .error: entries.append("error")
            }
        }
        realm.refresh()
        try realm.write { person.name = "Moe" }
        #expect(entries == ["initial 2", "d[] i[] m[\"first\"]"])
        token.invalidate()
    }

    /// realm-swift KeyPathTests `testOldObjectSyntax`: `_name(for: \SwiftDogObject.owners)` is
    /// "owners". Before, the Swift key path to the legacy declaration named nothing and trapped
    /// ("does not name a persisted property").
    @Test func aSwiftKeyPathToTheLegacyDeclarationNamesIt() throws {
        #expect(_name(for: \LegacyDog.owners) == "owners")
        let (realm, _, _) = try setUp()
        #expect(realm.objects(LegacyDog.self).sorted(by: \.name).where { $0.owners.name == "Ann" }.count == 1)
    }
}
