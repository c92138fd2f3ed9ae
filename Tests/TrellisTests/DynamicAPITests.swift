import Foundation
import Testing
@testable import Trellis

class DynHome: EmbeddedObject {
    @Persisted var city = ""
}

class DynPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pets") var owners: LinkingObjects<DynOwner>
}

class DynTicket: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var title = ""
}

class DynOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var score: Double?
    @Persisted var pet: DynPet?
    @Persisted var pets: List<DynPet>
    @Persisted var petSet: MutableSet<DynPet>
    @Persisted var petsByName: Map<String, DynPet?>
    @Persisted var tags: List<String>
    @Persisted var home: DynHome?
}

@Suite struct DynamicAPITests {
    let folder = TemporaryFolder()

    func owners() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([DynOwner.self, DynPet.self, DynHome.self]))
        try realm.write {
            let rex = DynPet(value: ["name": "Rex", "age": 3])
            let tom = DynPet(value: ["name": "Tom", "age": 7])
            let ann = DynOwner(value: ["id": 1, "name": "Ann", "score": 2.5, "tags": ["a", "b"],
                                       "home": ["city": "Oslo"]])
            ann.pet = rex
            ann.pets.append(objectsIn: [rex, tom])
            ann.petSet.insert(tom)
            ann.petsByName["rex"] = rex
            realm.add(ann)
            realm.add(DynOwner(value: ["id": 2, "name": "Bob"]))
        }
        return realm
    }

    @Test func dynamicObjectsReadsEveryObjectOfAClassByName() throws {
        let realm = try owners()
        let people = realm.dynamicObjects("DynOwner")
        #expect(people.count == 2)
        #expect(people.description.hasPrefix("Results<DynOwner> <0x"))
        #expect(people.description.contains("\t[1] DynOwner {"))
        let ann = try #require(people.first)
        #expect(ann["name"] as? String == "Ann")
        #expect(ann.name as? String == "Ann")
        #expect(ann.score as? Double == 2.5)
        #expect(people[1].score == nil)
        #expect(ann.objectSchema.className == "DynOwner")
        // As in Realm, a to-one link of a Realm that has the target's model class reads as an
        // object of that class (Realm's RealmTests.testDynamicObjectProperties).
        #expect((ann.pet as? DynPet)?.name == "Rex")
        #expect((ann.home as? DynHome)?.city == "Oslo")
        let pet = try #require((ann.pets as? List<DynamicObject>)?.first)
        #expect(pet.name as? String == "Rex")
        #expect((ann.pets as? List<DynamicObject>)?.map { $0.name as? String } == ["Rex", "Tom"])
        #expect((ann.tags as? List<String>).map(Array.init) == ["a", "b"])
        #expect((ann.petSet as? MutableSet<DynamicObject>)?.first?.name as? String == "Tom")
        #expect(((ann.petsByName as? Map<String, DynamicObject?>)?["rex"] ?? nil)?.age as? Int == 3)
        let owners = try #require(pet.owners as? LinkingObjects<DynamicObject>)
        #expect(owners.map { $0.name as? String } == ["Ann"])
    }

    @Test func dynamicResultsFilterAndSortThroughLinks() throws {
        let realm = try owners()
        let pets = realm.dynamicObjects("DynPet")
        #expect(pets.filter("age > %@", 5).map { $0.name as? String } == ["Tom"])
        #expect(pets.sorted(byKeyPath: "age", ascending: false).first?.name as? String == "Tom")
        #expect(realm.dynamicObjects("DynOwner").filter("pet.name == 'Rex'").count == 1)
        #expect(realm.dynamicObjects("DynOwner").filter("ANY pets.age > 5 AND home.city == 'Oslo'").count == 1)
        #expect(pets.filter("ANY owners.name == 'Ann'").count == 2)
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        #expect(ann.dynamicList("pets").filter("age < 5").map { $0.name as? String } == ["Rex"])
        #expect(realm.dynamicObjects("DynPet").max(ofProperty: "age") as Int? == 7)
    }

    @Test func dynamicObjectForPrimaryKeyFindsTheObjectOrNil() throws {
        let realm = try owners()
        #expect(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 2)?.name as? String == "Bob")
        #expect(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 9) == nil)
    }

    @Test func dynamicCollectionsOfATypedObjectAreTheSameStoredCollections() throws {
        let realm = try owners()
        let ann = try #require(realm.object(ofType: DynOwner.self, forPrimaryKey: 1))
        let pets = ann.dynamicList("pets")
        #expect(pets.map { $0.name as? String } == ["Rex", "Tom"])
        #expect(ann.dynamicMutableSet("petSet").count == 1)
        let map: Map<String, DynamicObject?> = ann.dynamicMap("petsByName")
        #expect((map["rex"] ?? nil)?.name as? String == "Rex")
        try realm.write {
            pets.remove(at: 0)
            pets.append(realm.dynamicCreate("DynPet", value: ["name": "Kit", "age": 1]))
        }
        #expect(ann.pets.map(\.name) == ["Tom", "Kit"])
    }

    @Test func dynamicCreateWritesObjectsTheModelClassesRead() throws {
        let realm = try owners()
        try realm.write {
            let created = realm.dynamicCreate("DynOwner", value: [
                "id": 3, "name": "Cid", "score": 1, "pet": ["name": "Max", "age": 4], "tags": ["x"],
                "home": ["city": "Bergen"], "pets": [["name": "Ace", "age": 2]], "petsByName": ["max": NSNull()],
            ])
            #expect(created.name as? String == "Cid")
            realm.dynamicCreate("DynPet", value: ["Zed", 9])  // an array in property order
        }
        let cid = try #require(realm.object(ofType: DynOwner.self, forPrimaryKey: 3))
        #expect(cid.name == "Cid")
        #expect(cid.score == 1.0)
        #expect(cid.pet?.name == "Max")
        #expect(cid.home?.city == "Bergen")
        #expect(Array(cid.tags) == ["x"])
        #expect(cid.pets.map(\.age) == [2])
        #expect(cid.petsByName.keys.contains("max"))
        #expect(realm.objects(DynPet.self).filter("name == 'Zed'").first?.age == 9)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func dynamicCreateWithoutAPrimaryKeyStoresTheGeneratedKeyItIndexed() throws {
        // The primary key left out of the value is made once: the row and the primary-key
        // index hold the same ObjectId, so a lookup by the object's own key finds it.
        let realm = try Realm(configuration: folder.configuration([DynTicket.self]))
        let created = try realm.write { realm.dynamicCreate("DynTicket", value: ["title": "first"]) }
        let id = try #require(created["_id"] as? ObjectId)
        #expect(realm.object(ofType: DynTicket.self, forPrimaryKey: id)?.title == "first")
        #expect(realm.dynamicObject(ofType: "DynTicket", forPrimaryKey: id)?["title"] as? String == "first")
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func dynamicCreateWithUpdateChangesTheObjectWithThatPrimaryKey() throws {
        let realm = try owners()
        try realm.write {
            realm.dynamicCreate("DynOwner", value: ["id": 2, "name": "Robert"], update: .modified)
        }
        #expect(realm.objects(DynOwner.self).count == 2)
        #expect(realm.object(ofType: DynOwner.self, forPrimaryKey: 2)?.name == "Robert")
    }

    @Test func settingDynamicPropertiesWritesTheRow() throws {
        let realm = try owners()
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        let tom = try #require(realm.dynamicObjects("DynPet").filter("name == 'Tom'").first)
        try realm.write {
            ann.name = "Anna"
            ann["score"] = nil
            ann.pet = tom
            ann.tags = ["z", "y", "x"]
            ann.home = ["city": "Tromsø"]
            tom.age = 8
        }
        let typed = try #require(realm.object(ofType: DynOwner.self, forPrimaryKey: 1))
        #expect(typed.name == "Anna")
        #expect(typed.score == nil)
        #expect(typed.pet?.name == "Tom")
        #expect(Array(typed.tags) == ["z", "y", "x"])
        #expect(typed.home?.city == "Tromsø")
        #expect(realm.objects(DynPet.self).filter("name == 'Tom'").first?.age == 8)
        try realm.write { realm.delete(ann) }
        #expect(ann.isInvalidated)
        #expect(realm.objects(DynOwner.self).count == 1)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func dynamicObjectsFreezeThawAndCrossThreads() throws {
        let realm = try owners()
        let ann = try #require(realm.dynamicObject(ofType: "DynOwner", forPrimaryKey: 1))
        let frozen = ann.freeze()
        try realm.write { ann.name = "Anna" }
        #expect(frozen.name as? String == "Ann")
        #expect(frozen.thaw()?.name as? String == "Anna")
        let reference = ThreadSafeReference(to: ann)
        let configuration = realm.configuration
        let name = try onOtherThread { () -> String? in
            let other = try Realm(configuration: configuration)
            return other.resolve(reference)?.name as? String
        }
        #expect(name == "Anna")
    }

    @Test func dynamicResultsSeeACommitFromAnotherThread() throws {
        let realm = try owners()
        let pets = realm.dynamicObjects("DynPet").sorted(byKeyPath: "age")
        let log = LockedBox<[String]>([])
        let token = pets.observe { change in
            switch change {
            case .initial(let pets): log.mutate { $0.append("initial \(pets.count)") }
            case .update(let pets, let deletions, let insertions, let modifications):
                log.mutate { $0.append("\(Array(pets.compactMap { $0.name as? String })) d\(deletions) i\(insertions) m\(modifications)") }
            case .error: break
            }
        }
        realm.refresh()
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write {
                other.dynamicCreate("DynPet", value: ["name": "Pip", "age": 5])
                other.dynamicObjects("DynPet").filter("name == 'Rex'").first?.age = 4
            }
        }
        realm.refresh()
        token.invalidate()
        #expect(log.get() == ["initial 2", "[\"Rex\", \"Pip\", \"Tom\"] d[] i[1] m[0]"])
    }

    @Test func aFileWrittenByAnotherProgramIsWalkedWithoutItsClasses() throws {
        // `trellis demo` (another executable, with its own Person/Dog/DogClub/Address classes)
        // writes demo.realm; this process has none of those classes.
        let demo = try runTrellis(["demo", "--dir", folder.url.path])
        #expect(demo.status == 0, "\(demo.stderr)")
        let url = folder.url.appendingPathComponent("demo.realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url))
        // The file's classes as stored (this program's Dog, Person and Address differ from the
        // demo's: the file's schema wins), beside this program's other model classes.
        #expect(Set(realm.schema.objectSchema.map(\.className)).isSuperset(of: ["Address", "Dog", "DogClub", "Person"]))

        var walk = [String]()
        for person in realm.dynamicObjects("Person").sorted(byKeyPath: "name") {
            let dog = (person.dog as? DynamicObject).map { "\($0.name as? String ?? "?") (\($0.age as? Int ?? -1))" }
            let dogs = Array(person.dynamicList("dogs").compactMap { $0.name as? String })
            let city = (person.address as? DynamicObject)?.city as? String
            let clubs = (person.clubs as? LinkingObjects<DynamicObject>).map { Array($0.compactMap { $0.name as? String }) } ?? []
            walk.append("\(person.name as? String ?? "?") in \(city ?? "?"): dog \(dog ?? "none"), "
                + "dogs \(dogs.joined(separator: "+")), clubs \(clubs.joined(separator: "+"))")
        }
        #expect(walk == [
            "Ana in Lisbon: dog Fido (5), dogs Ana's puppy+Fido, clubs Sprinters",
            "Ola in Bergen: dog none, dogs Ola's puppy, clubs ",
            "Tim in Oslo: dog Rex (3), dogs Tim's puppy+Rex, clubs Sprinters",
        ])
        let club = try #require(realm.dynamicObjects("DogClub").first)
        #expect(club.dynamicList("regionalOfficeAddresses").first?.city as? String == "Trondheim")
        #expect(realm.dynamicObjects("Person").filter("dog.age >= 5").first?.name as? String == "Ana")
        #expect(realm.dynamicObject(ofType: "Dog", forPrimaryKey: ObjectId.generate()) == nil)

        // Written back without the classes, read by the other program.
        try realm.write {
            let tim = realm.dynamicObjects("Person").filter("name == 'Tim'").first
            tim?.dynamicList("dogs").append(realm.dynamicCreate("Dog", value: ["name": "Max", "age": 9]))
        }
        let query = try runTrellis(["query", url.path, "Person", "ANY dogs.name == 'Max'"])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.contains(#""name":"Tim""#))
        #expect(realm._consistencyProblems().isEmpty)
    }

    // MARK: - Misuse traps with Realm's messages

    @Test func anUnknownClassTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MisuseTests.freshRealm().dynamicObjects("Cat")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Object type 'Cat' is not managed by the Realm"))
    }

    @Test func aClassWithoutPrimaryKeyTrapsOnLookup() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MisuseTests.freshRealm().dynamicObject(ofType: "Dog", forPrimaryKey: 1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("'Dog' does not have a primary key defined"))
    }

    @Test func updatingAClassWithoutPrimaryKeyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write { realm.dynamicCreate("Dog", value: ["name": "Rex"], update: .modified) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("'Dog' does not have a primary key and can not be updated"))
    }

    @Test func creatingAnEmbeddedObjectDirectlyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try? Realm(configuration: .init(fileURL: FileManager.default.temporaryDirectory
                .appendingPathComponent("trellis-exit-\(UUID()).realm"), objectTypes: [DynOwner.self, DynPet.self,
                                                                                        DynHome.self]))
            try? realm?.write { realm?.dynamicCreate("DynHome", value: ["city": "Oslo"]) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Embedded objects cannot be created directly"))
    }

    @Test func creatingOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MisuseTests.freshRealm().dynamicCreate("Dog", value: ["name": "Rex"])
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can only add, remove, or create objects in a Realm in a write transaction"))
    }

    @Test func aValueOfTheWrongTypeTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write {
                let dog = realm.dynamicCreate("Dog", value: ["name": "Rex"])
                dog.age = "old"
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid value 'old' of type 'String' for 'int' property 'Dog.age'."))
    }

    @Test func anUnknownPropertyTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write { _ = realm.dynamicCreate("Dog", value: ["name": "Rex"]).color }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Invalid property name 'color' for class 'Dog'."))
    }

    @Test func linkingAnObjectOfAnotherClassTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write {
                let person = realm.dynamicCreate("Person", value: ["name": "Tim"])
                person.dog = realm.dynamicCreate("PKDog", value: ["pk": "x"])
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can't set object of type 'PKDog' to property of type 'Dog'"))
    }

    @Test func settingAPropertyOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            var dog: DynamicObject?
            try? realm.write { dog = realm.dynamicCreate("Dog", value: ["name": "Rex"]) }
            dog?.name = "Max"
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Attempting to modify object outside of a write transaction"))
    }
}
