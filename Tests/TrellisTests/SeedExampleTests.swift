import Foundation
import Testing
@testable import Trellis

/// The seeds' Swift models, as written: write, reopen the file, read the relationships back.
@Suite struct SeedExampleTests {
    let folder = TemporaryFolder()

    @Test func toManyPersonDogsSurviveAReopen() throws {
        let types: [ObjectBase.Type] = [SeedToMany.Person.self, SeedToMany.Dog.self]
        do {
            let realm = try Realm(configuration: folder.configuration(types))
            let person = SeedToMany.Person()
            person.name = "Ali"
            for name in ["Rex", "Fido", "Rex"] {
                let dog = SeedToMany.Dog()
                dog.name = name
                person.dogs.append(dog)
            }
            try realm.write { realm.add(person) }
        }
        let names: [String] = try onOtherThread { [folder] in
            let realm = try Realm(configuration: folder.configuration(types))
            #expect(realm._consistencyProblems().isEmpty)
            return realm.objects(SeedToMany.Person.self).first?.dogs.map(\.name) ?? []
        }
        #expect(names == ["Rex", "Fido", "Rex"])
    }

    @Test func inverseUserTaskAssigneeFollowsTheTaskList() throws {
        let types: [ObjectBase.Type] = [SeedInverse.User.self, SeedInverse.Task.self]
        do {
            let realm = try Realm(configuration: folder.configuration(types))
            let user = SeedInverse.User()
            user.name = "Ada"
            let task = SeedInverse.Task()
            task.text = "write the engine"
            user.tasks.append(task)
            try realm.write { realm.add(user) }
            #expect(task.assignee.first?.name == "Ada")
        }
        let result: (Int, String?) = try onOtherThread { [folder] in
            let realm = try Realm(configuration: folder.configuration(types))
            let task = realm.objects(SeedInverse.Task.self).first
            let assignees = task?.assignee.count ?? -1
            let user = realm.objects(SeedInverse.User.self).first
            try realm.write { user?.tasks.removeAll() }
            return (assignees, task?.assignee.first?.name)
        }
        #expect(result.0 == 1)
        #expect(result.1 == nil)
    }

    @Test func embeddedPersonDogClubAddressTree() throws {
        let types: [ObjectBase.Type] = [SeedEmbedded.Person.self, SeedEmbedded.DogClub.self,
                                        SeedEmbedded.Address.self, SeedEmbedded.Dog.self]
        do {
            let realm = try Realm(configuration: folder.configuration(types))
            let address = SeedEmbedded.Address()
            address.street = "123 Fake St"
            address.city = "Springfield"
            let person = SeedEmbedded.Person(name: "Lisa", address: address)
            person.id = 1
            let office = SeedEmbedded.Address()
            office.city = "Shelbyville"
            let club = SeedEmbedded.DogClub(name: "Sprinters", addresses: [office])
            club.members.append(person)
            try realm.write { realm.add(club) }
        }
        let summary: [String] = try onOtherThread { [folder] in
            let realm = try Realm(configuration: folder.configuration(types))
            #expect(realm._consistencyProblems().isEmpty)
            guard let person = realm.object(ofType: SeedEmbedded.Person.self, forPrimaryKey: 1),
                  let club = realm.objects(SeedEmbedded.DogClub.self).first
            else { return [] }
            var out = [person.address?.city ?? "-", club.regionalOfficeAddresses.first?.city ?? "-",
                       person.clubs.first?.name ?? "-"]
            try realm.write { realm.delete(person) }
            out.append("\(club.members.count)")
            return out
        }
        #expect(summary == ["Springfield", "Shelbyville", "Sprinters", "0"])
    }
}
