import Foundation
import Trellis

/// W1-W7 on Trellis.
struct TrellisWorkloads {
    let sizes: Sizes
    let scratch: Scratch
    let sums: Checksums
    /// The key every file of these workloads is written with (`--encrypted`); nil: plain files.
    var encryptionKey: Data?

    func open(_ url: URL, sync: Bool = true) throws -> Realm {
        var configuration = Realm.Configuration(fileURL: url, objectTypes: [BenchDog.self, BenchPerson.self])
        configuration.syncOnCommit = sync
        configuration.encryptionKey = encryptionKey
        // Under valgrind a 64 GiB reservation fails; 8 GiB is plenty here and costs nothing.
        configuration.maximumFileSize = 8 << 30
        return try Realm(configuration: configuration)
    }

    /// W1's data: `objects` dogs and people, person i linking dog i.
    func insertPeopleWithDogs(_ realm: Realm) throws {
        try realm.write {
            for i in 0..<sizes.objects {
                let dog = BenchDog()
                dog.id = i
                dog.name = "dog \(i)"
                dog.age = i % 80
                let person = BenchPerson()
                person.id = i
                person.name = "person \(i)"
                person.dog = dog
                realm.add(person)
            }
        }
    }

    /// W3's data: `listOwners` people with `listLength` dogs each.
    func insertListOwners(_ realm: Realm) throws {
        try realm.write {
            for i in 0..<sizes.listOwners {
                let person = BenchPerson()
                person.id = i
                person.name = "owner \(i)"
                for j in 0..<sizes.listLength {
                    let dog = BenchDog()
                    dog.id = i * sizes.listLength + j
                    dog.name = "dog \(j)"
                    dog.age = j
                    person.dogs.append(dog)
                }
                realm.add(person)
            }
        }
    }

    /// `sync: false` commits without fsync, as GRDB's default (WAL, `synchronous = NORMAL`) does.
    func w1Insert(sync: Bool = true) throws -> Double {
        var realm: Realm?
        let time = try median(sizes.repetitions, setup: { realm = try open(scratch.file("w1.realm"), sync: sync) }) {
            try insertPeopleWithDogs(realm!)
        }
        return time
    }

    /// `sizes.listOwners` owners of a set and a map of 10 members each (the `C` workloads).
    func collectionsFile() throws -> Realm {
        var configuration = Realm.Configuration(fileURL: scratch.file("collections.realm"), objectTypes: [BenchTagged.self])
        configuration.encryptionKey = encryptionKey
        configuration.maximumFileSize = 8 << 30
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in 0..<sizes.listOwners {
                let owner = realm.create(BenchTagged.self, value: ["id": id])
                owner.tags.insert(objectsIn: 0..<10)
                for key in 0..<10 { owner.scores["k\(key)"] = key }
            }
        }
        return realm
    }

    /// One pass of `CsetCount`: every owner's set's count.
    func setCountPass(_ realm: Realm) -> Int {
        var sum = 0
        for owner in realm.objects(BenchTagged.self) { sum &+= owner.tags.count }
        return sum
    }

    /// One pass of `CmapCount`: every owner's map's count.
    func mapCountPass(_ realm: Realm) -> Int {
        var sum = 0
        for owner in realm.objects(BenchTagged.self) { sum &+= owner.scores.count }
        return sum
    }

    /// A file with W1's data, for the read workloads.
    func w1File() throws -> Realm {
        let realm = try open(scratch.file("read.realm"))
        try insertPeopleWithDogs(realm)
        return realm
    }

    func w2ToOne(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W2", w2Pass(realm)) }
    }

    /// One pass of W2: every person's dog's age (one link hop per person).
    func w2Pass(_ realm: Realm) -> Int {
        var sum = 0
        for person in realm.objects(BenchPerson.self) { sum &+= person.dog?.age ?? 0 }
        return sum
    }

    func w3Build() throws -> Double {
        var realm: Realm?
        return try median(sizes.repetitions, setup: { realm = try open(scratch.file("w3.realm")) }) {
            try insertListOwners(realm!)
        }
    }

    func w3File() throws -> Realm {
        let realm = try open(scratch.file("lists.realm"))
        try insertListOwners(realm)
        return realm
    }

    func w3Iterate(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W3", w3IteratePass(realm)) }
    }

    /// One pass of W3's iteration: the age of every dog of every person's list.
    func w3IteratePass(_ realm: Realm) -> Int {
        var sum = 0
        for person in realm.objects(BenchPerson.self) {
            for dog in person.dogs { sum &+= dog.age }
        }
        return sum
    }

    func w4Backlinks(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W4", w4Pass(realm)) }
    }

    /// One pass of W4: every dog's number of owners.
    func w4Pass(_ realm: Realm) -> Int {
        var sum = 0
        for dog in realm.objects(BenchDog.self) { sum &+= dog.listOwners.count }
        return sum
    }

    func w5Scan(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W5 scan", w5ScanPass(realm)) }
    }

    /// One pass of W5's scan: how many dogs are older than 40 (a new Results, so it is evaluated).
    func w5ScanPass(_ realm: Realm) -> Int {
        realm.objects(BenchDog.self).filter("age > 40").count
    }

    // Issue 19's W5 rows over the scan's Dogs: aggregates, a compound filter, a sorted prefix.

    func w5Sum(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W5 sum", realm.objects(BenchDog.self).sum(of: \.age)) }
    }

    /// `average(ofProperty:)` as a Double: the key-path form `average(of: \.age)` returns the
    /// property's type, `Int?`, truncating 39.5 to 39, which would hide most wrong answers.
    func w5Average(_ realm: Realm) -> Double {
        median(sizes.repetitions) {
            let average: Double? = realm.objects(BenchDog.self).average(ofProperty: "age")
            sums.record("W5 average", microunits(average))
        }
    }

    func w5MinMax(_ realm: Realm) -> Double {
        median(sizes.repetitions) {
            let dogs = realm.objects(BenchDog.self)
            sums.record("W5 min", dogs.min(of: \.age) ?? -1)
            sums.record("W5 max", dogs.max(of: \.age) ?? -1)
        }
    }

    func w5Prefix(_ realm: Realm) -> Double {
        median(sizes.repetitions) {
            sums.record("W5 prefix", realm.objects(BenchDog.self).filter("age > 40 AND name BEGINSWITH 'dog 1'").count)
        }
    }

    func w5Sorted(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W5 sorted", w5SortedPass(realm)) }
    }

    /// One pass of W5's sorted prefix: the ages of the first 100 dogs by age, folded in order
    /// (``sequenceChecksum(_:_:)``), so a wrong order or length shows; which dogs of equal age
    /// come first is left to each engine.
    func w5SortedPass(_ realm: Realm) -> Int {
        var sum = 0
        for dog in realm.objects(BenchDog.self).sorted(by: \.age).prefix(100) { sum = sequenceChecksum(sum, dog.age) }
        return sum
    }

    func w5Link(_ realm: Realm) -> Double {
        median(sizes.repetitions) {
            sums.record("W5 link", realm.objects(BenchPerson.self).filter("dog.age > 10").count)
        }
    }

    func w5Lookup(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W5 lookup", w5LookupPass(realm)) }
    }

    /// One pass of W5's lookups: `sizes.lookups` dogs found by primary key, reading their age.
    func w5LookupPass(_ realm: Realm) -> Int {
        var sum = 0
        var key = 7
        for _ in 0..<sizes.lookups {
            key = (key &* 31 &+ 17) % sizes.objects
            sum &+= realm.object(ofType: BenchDog.self, forPrimaryKey: key)?.age ?? 0
        }
        return sum
    }

    func w6Commits(sync: Bool) throws -> Double {
        var realm: Realm?
        return try median(sizes.repetitions, setup: { realm = try open(scratch.file("w6.realm"), sync: sync) }) {
            for i in 0..<sizes.commits {
                try realm!.write {
                    let dog = BenchDog()
                    dog.id = i
                    dog.name = "dog \(i)"
                    realm!.add(dog)
                }
            }
        }
    }

    func w7Enumerate(_ realm: Realm) -> Double {
        median(sizes.repetitions) { sums.record("W7", w7Pass(realm)) }
    }

    /// One pass of W7: every dog's age and the length of its name.
    func w7Pass(_ realm: Realm) -> Int {
        var sum = 0
        for dog in realm.objects(BenchDog.self) { sum &+= dog.age &+ dog.name.utf8.count }
        return sum
    }
}

/// An average to a millionth, for ``Checksums`` (-1 for none).
func microunits(_ value: Double?) -> Int {
    value.map { Int(($0 * 1_000_000).rounded()) } ?? -1
}

/// Folds one more value of a sequence into `sum`, order and length included.
func sequenceChecksum(_ sum: Int, _ value: Int) -> Int {
    sum &* 31 &+ value &+ 1
}
