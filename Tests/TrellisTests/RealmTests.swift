import Foundation
import Testing
@testable import Trellis

@Suite struct RealmTests {
    let folder = TemporaryFolder()

    /// A metatype held as `Object.Type` (as code that works with any class does) must look up
    /// the class it names; the lookup once built its probe from the static type and wrote the
    /// key past the end of a base `Object` (heap corruption, found by ExtendedJSONTests).
    @Test func primaryKeyLookupThroughABaseClassMetatypeUsesTheDynamicClass() throws {
        let realm = try open([KeyedDog.self])
        let dog = KeyedDog(name: "Rex", age: 3)
        try realm.write { realm.add(dog) }
        let type: Object.Type = KeyedDog.self
        let found = realm.object(ofType: type, forPrimaryKey: dog._id)
        #expect((found as? KeyedDog)?.name == "Rex")
        #expect(realm.object(ofType: type, forPrimaryKey: ObjectId.generate()) == nil)
    }

    func open(_ types: [ObjectBase.Type]? = [Person.self, Dog.self]) throws -> Realm {
        try Realm(configuration: folder.configuration(types))
    }

    /// Counting and iterating inside a write see every object added so far, far more than
    /// the committed file holds (no cap may be derived from the committed size).
    @Test func countAndIterationInsideABigWriteSeeEveryNewObject() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write {
            for index in 0..<20_000 {
                let dog = Dog()
                dog.age = index
                realm.add(dog)
            }
            #expect(realm.objects(Dog.self).count == 20_000)
            #expect(realm.objects(Dog.self).reduce(0) { total, _ in total + 1 } == 20_000)
        }
        #expect(realm.objects(Dog.self).count == 20_000)
    }

    @Test func writeReturnsTheBlocksValueAndCommits() throws {
        let realm = try open()
        let name = try realm.write { () -> String in
            realm.add(Dog(value: ["name": "Rex", "age": 3]))
            return "done"
        }
        #expect(name == "done")
        #expect(realm.objects(Dog.self).count == 1)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func throwingInsideWriteCancelsAndRethrows() throws {
        struct Stop: Error {}
        let realm = try open()
        #expect(throws: Stop.self) {
            try realm.write {
                realm.add(Dog())
                throw Stop()
            }
        }
        #expect(realm.objects(Dog.self).isEmpty)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func cancelWriteRollsBackAndInvalidatesCreatedObjects() throws {
        let realm = try open()
        realm.beginWrite()
        let dog = realm.create(Dog.self, value: ["name": "Ghost"])
        #expect(realm.isInWriteTransaction)
        realm.cancelWrite()
        #expect(dog.isInvalidated)
        #expect(realm.objects(Dog.self).count == 0)
    }

    /// Realm's RealmTests.testCancelWrite: an object made in a write that also made its class's
    /// table, rolled back with `cancelWrite()` inside `write {}`. The accessor's table is
    /// referenced unowned, so the rolled-back table must outlive the write (it was freed, and
    /// `isInvalidated` read freed memory: a crash in about half of the runs).
    @Test func anObjectWhoseTableARolledBackWriteMadeIsInvalidatedAndItsTableKept() throws {
        // The default schema: a class's table is made by the first write that adds an object.
        let realm = try open(nil)
        weak var rolledBackTable: Table?
        var made: Dog?
        try realm.write {
            let dog = realm.create(Dog.self, value: ["name": "Ghost"])
            made = dog
            rolledBackTable = dog._managed?.table
            realm.cancelWrite()
            // Churn the allocator so that freed memory would be reused at once.
            let churn = (0..<2_000).map { _ in NSObject() }
            #expect(churn.count == 2_000)
            #expect(rolledBackTable != nil)
            #expect(dog.isInvalidated)
            #expect(realm.objects(Dog.self).count == 0)
        }
        #expect(realm.objects(Dog.self).count == 0)
        let dog = try #require(made)
        // The class's table can be made again, and holds only the new object. The new object
        // may get the rolled-back one's key, but the old accessor stays invalidated (in
        // realm-core, its table reference is to a table accessor the rollback detached).
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
        #expect(dog.isInvalidated)
    }

    @Test func managedObjectReadsItsPropertiesFromTheDatabase() throws {
        let realm = try open()
        let dog = Dog()
        dog.name = "Rex"
        dog.breed = "Collie"
        try realm.write { realm.add(dog) }
        #expect(dog.realm == realm)
        let fetched = try #require(realm.objects(Dog.self).first)
        #expect(fetched.name == "Rex")
        #expect(fetched.breed == "Collie")
        try realm.write { fetched.age = 7; fetched.breed = nil }
        #expect(dog.age == 7)
        #expect(dog.breed == nil)
    }

    @Test func unmanagedObjectsWorkAsPlainSwiftObjects() {
        let dog = Dog()
        #expect(dog.realm == nil)
        #expect(dog.name == "")
        dog.name = "Plain"
        dog.age = 2
        #expect(dog.name == "Plain" && dog.age == 2)
        #expect(!dog.isInvalidated)
        let keyed = KeyedDog(name: "K", age: nil)
        #expect(keyed._id != ObjectId())
        #expect(keyed.age == nil)
    }

    @Test func everyScalarTypeRoundTripsThroughTheFile() throws {
        let realm = try open([AllTypes.self, Dog.self])
        let id = ObjectId.generate(), uuid = UUID(), date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let object = AllTypes()
        object.bool = true; object.int = -42; object.int8 = -8; object.int16 = 1600; object.int32 = -32
        object.int64 = Int64.max; object.float = 1.5; object.double = -2.25; object.string = "héllo wörld, a longer string"
        object.data = Data([0, 1, 2, 255]); object.date = date; object.decimal = try Decimal128(string: "123.456")
        object.objectId = id; object.uuid = uuid; object.any = .string("mixed"); object.size = .large; object.level = .low
        object.optBool = false; object.optInt = 0; object.optInt8 = nil; object.optFloat = 2.5; object.optDouble = nil
        object.optString = "s"; object.optData = nil; object.optDate = date; object.optDecimal = nil
        object.optObjectId = id; object.optUUID = nil; object.optSize = .small
        try realm.write { realm.add(object) }
        let read = try #require(realm.objects(AllTypes.self).first)
        #expect(read.bool && read.int == -42 && read.int8 == -8 && read.int16 == 1600 && read.int32 == -32)
        #expect(read.int64 == Int64.max && read.float == 1.5 && read.double == -2.25)
        #expect(read.string == "héllo wörld, a longer string" && read.data == Data([0, 1, 2, 255]))
        #expect(read.date == date && read.decimal.stringValue == "123.456")
        #expect(read.objectId == id && read.uuid == uuid && read.any == .string("mixed"))
        #expect(read.size == .large && read.level == .low)
        #expect(read.optBool == false && read.optInt == 0 && read.optInt8 == nil && read.optFloat == 2.5)
        #expect(read.optDouble == nil && read.optString == "s" && read.optData == nil && read.optDate == date)
        #expect(read.optDecimal == nil && read.optObjectId == id && read.optUUID == nil && read.optSize == .small)
    }

    @Test func anyRealmValueHoldsEachKindAndLinks() throws {
        let realm = try open([AllTypes.self, Dog.self])
        let dog = Dog(value: ["name": "Linked"])
        let values: [AnyRealmValue] = [.none, .int(5), .bool(true), .float(1.5), .double(2.5), .string("x"),
                                       .data(Data([9])), .date(Date(timeIntervalSince1970: 5)), .objectId(ObjectId()),
                                       .decimal128(Decimal128(3)), .uuid(UUID()), .object(dog)]
        try realm.write {
            for value in values {
                let object = AllTypes()
                object.any = value
                realm.add(object)
            }
        }
        let read = realm.objects(AllTypes.self).map(\.any)
        #expect(Array(read.dropLast()) == Array(values.dropLast()))
        #expect(read.last?.object(Dog.self)?.name == "Linked")
    }

    @Test func primaryKeyLookupFindsTheObject() throws {
        let realm = try open([KeyedDog.self, IntKeyed.self])
        let dog = KeyedDog(name: "Rex", age: 4)
        try realm.write {
            realm.add(dog)
            realm.add(IntKeyed(value: ["id": 7, "label": "seven"]))
        }
        #expect(realm.object(ofType: KeyedDog.self, forPrimaryKey: dog._id)?.name == "Rex")
        #expect(realm.object(ofType: KeyedDog.self, forPrimaryKey: ObjectId.generate()) == nil)
        #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: 7)?.label == "seven")
        #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: 8) == nil)
    }

    @Test func updateModifiedUpsertsByPrimaryKey() throws {
        let realm = try open([PKDog.self, PKOwner.self])
        try realm.write { realm.add(PKDog(value: ["pk": "a", "value": 1])) }
        try realm.write { realm.add(PKDog(value: ["pk": "a", "value": 2]), update: .modified) }
        #expect(realm.objects(PKDog.self).count == 1)
        #expect(realm.object(ofType: PKDog.self, forPrimaryKey: "a")?.value == 2)
        try realm.write { realm.add(PKOwner(value: ["pk": "o", "dog": ["pk": "a", "value": 3]]), update: .all) }
        #expect(realm.objects(PKDog.self).count == 1)
        #expect(realm.object(ofType: PKOwner.self, forPrimaryKey: "o")?.dog?.value == 3)
    }

    @Test func createWithDictionaryAndArrayValues() throws {
        let realm = try open([PKDog.self, PKOwner.self])
        try realm.write {
            realm.create(PKDog.self, value: ["pk": "d", "value": 5])
            realm.create(PKOwner.self, value: ["o1", ["d2", 9]])
        }
        #expect(realm.object(ofType: PKOwner.self, forPrimaryKey: "o1")?.dog?.pk == "d2")
        try realm.write { realm.create(PKDog.self, value: ["pk": "d", "value": 6], update: .modified) }
        #expect(realm.object(ofType: PKDog.self, forPrimaryKey: "d")?.value == 6)
        #expect(realm.objects(PKDog.self).count == 2)
    }

    @Test func addingAManagedObjectAgainIsANoOp() throws {
        let realm = try open()
        let dog = Dog()
        try realm.write { realm.add(dog); realm.add(dog) }
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func deletedObjectReportsInvalidated() throws {
        let realm = try open()
        let dog = Dog()
        try realm.write { realm.add(dog) }
        let other = try #require(realm.objects(Dog.self).first)
        try realm.write { realm.delete(dog) }
        #expect(dog.isInvalidated)
        #expect(other.isInvalidated)
        #expect(realm.objects(Dog.self).isEmpty)
    }

    @Test func deleteAllEmptiesTheRealm() throws {
        let realm = try open()
        try realm.write { realm.add([Dog(), Dog(), Dog()]) }
        #expect(!realm.isEmpty)
        try realm.write { realm.deleteAll() }
        #expect(realm.isEmpty)
        #expect(realm.objects(Dog.self).count == 0)
    }

    @Test func resultsAreLazyAndLive() throws {
        let realm = try open()
        let dogs = realm.objects(Dog.self)
        #expect(dogs.count == 0 && dogs.first == nil && dogs.last == nil && dogs.isEmpty)
        try realm.write {
            for i in 0..<5 { realm.add(Dog(value: ["name": "d\(i)", "age": i])) }
        }
        #expect(dogs.count == 5)
        #expect(dogs[0].name == "d0" && dogs.last?.name == "d4")
        #expect(dogs.map(\.age) == [0, 1, 2, 3, 4])
        try realm.write { realm.delete(dogs[1]) }
        #expect(dogs.map(\.name) == ["d0", "d2", "d3", "d4"])
        #expect(dogs.index(of: dogs[2]) == 2)
    }

    @Test func equalityFollowsPrimaryKeyOrIdentity() throws {
        let realm = try open([KeyedDog.self, Dog.self])
        let keyed = KeyedDog(name: "a", age: 1)
        let plain = Dog()
        try realm.write { realm.add(keyed); realm.add(plain) }
        let keyedAgain = try #require(realm.objects(KeyedDog.self).first)
        let plainAgain = try #require(realm.objects(Dog.self).first)
        #expect(keyed == keyedAgain)
        #expect(keyed.hashValue == keyedAgain.hashValue)
        #expect(plain != plainAgain)
        #expect(plain.isSameObject(as: plainAgain))
        #expect(keyed != KeyedDog(value: ["_id": keyed._id]))
    }

    @Test func sameThreadSameFileGivesTheSameInstance() throws {
        let a = try open()
        let b = try open()
        #expect(a == b)
    }

    @Test func dataPersistsAcrossReopen() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            try realm.write {
                let person = Person()
                person.name = "Ana"
                person.dog = Dog(value: ["name": "Rex", "age": 3])
                realm.add(person)
            }
        }
        let read = try onOtherThread { () -> [String] in
            let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            return realm.objects(Person.self).map { "\($0.name):\($0.dog?.name ?? "-"):\($0.dog?.age ?? -1)" }
        }
        #expect(read == ["Ana:Rex:3"])
    }

    @Test func snapshotIsolationUntilRefresh() throws {
        let realm = try open()
        #expect(realm.objects(Dog.self).count == 0)
        try onOtherThread {
            let writer = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            try writer.write { writer.add(Dog()) }
        }
        #expect(realm.objects(Dog.self).count == 0)
        #expect(realm.refresh())
        #expect(realm.objects(Dog.self).count == 1)
        #expect(!realm.refresh())
    }

    @Test func beginWriteMovesToTheNewestVersion() throws {
        let realm = try open()
        #expect(realm.objects(Dog.self).count == 0)  // the first read begins the read transaction
        try onOtherThread {
            let writer = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            try writer.write { writer.add(Dog()) }
        }
        #expect(realm.objects(Dog.self).count == 0)
        try realm.write { #expect(realm.objects(Dog.self).count == 1) }
    }

    /// As in Realm (RLMRealm ends the read transaction its open began; RLMRealmTests
    /// testRefreshCreatesAReadTransaction), a Realm just opened is in no read transaction: its
    /// first read begins one at the newest version, so it sees what was committed after the
    /// open, and stays on that version until refreshed.
    @Test func aRealmReadsFromItsFirstReadNotFromItsOpen() throws {
        let realm = try open()
        let configuration = folder.configuration([Person.self, Dog.self])
        let addDog = {
            try onOtherThread {
                let writer = try Realm(configuration: configuration)
                try writer.write { writer.add(Dog()) }
            }
        }
        try addDog()
        let first = realm.objects(Dog.self).count
        try addDog()
        let second = realm.objects(Dog.self).count
        let refreshed = realm.refresh()
        let counts: [Int] = [first, second]
        #expect(counts == [1, 1])
        #expect(refreshed)
        #expect(realm.objects(Dog.self).count == 2)
    }

    @Test func invalidateInvalidatesObjectsAndEndsTheWrite() throws {
        let realm = try open()
        try realm.write { realm.add(Dog()) }
        let dog = try #require(realm.objects(Dog.self).first)
        realm.beginWrite()
        realm.invalidate()
        #expect(!realm.isInWriteTransaction)
        #expect(dog.isInvalidated)
        #expect(realm.objects(Dog.self).count == 1)
        try realm.write { realm.add(Dog()) }
        #expect(realm.objects(Dog.self).count == 2)
    }

    @Test func lazySchemaRegistersClassesOnFirstUse() throws {
        let realm = try open(nil)
        #expect(realm.objects(Person.self).count == 0)
        try realm.write {
            let person = Person()
            person.dog = Dog()
            realm.add(person)
        }
        // The stored classes, and (the default schema) every other model class of the program.
        #expect(Set(realm.schema.objectSchema.map(\.className)).isSuperset(of: ["Dog", "Person"]))
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func inMemoryRealmWorks() throws {
        let realm = try Realm(configuration: .init(inMemoryIdentifier: "mem-\(UUID())", objectTypes: [Dog.self]))
        try realm.write { realm.add(Dog()) }
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func dynamicSubscriptReadsAndWrites() throws {
        let realm = try open()
        let dog = Dog()
        dog["name"] = "Dyn"
        #expect(dog["name"] as? String == "Dyn")
        try realm.write { realm.add(dog); dog["age"] = 9 }
        #expect(dog.age == 9)
        #expect(dog["breed"] == nil)
    }

    @Test func createWithASubclassMetatypeMakesThatSubclass() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self, Person.self]))
        let types: [Object.Type] = [Dog.self]
        try realm.write {
            for type in types { realm.create(type, value: ["name": "Rex", "age": 3]) }
        }
        #expect(realm.objects(Dog.self).first?.name == "Rex")
    }
}
