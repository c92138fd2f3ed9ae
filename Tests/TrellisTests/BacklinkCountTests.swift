#if TRELLIS_LMDB
import CLMDB
#endif
import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

final class BCDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
    @Persisted(originProperty: "dog") var owners: LinkingObjects<BCPerson>
    @Persisted(originProperty: "dogs") var listOwners: LinkingObjects<BCPerson>
    @Persisted(originProperty: "dogSet") var setOwners: LinkingObjects<BCPerson>
    @Persisted(originProperty: "dogMap") var mapOwners: LinkingObjects<BCPerson>
}

final class BCPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dog: BCDog?
    @Persisted var dogs: List<BCDog>
    @Persisted var dogSet: MutableSet<BCDog>
    @Persisted var dogMap: Map<String, BCDog?>
}

/// Stored backlink counts (`BacklinkCountBlockKey`): `dog.owners.count` reads one stored number,
/// which must always be the number of links the backlink index holds, through every kind of
/// link change, in and out of write transactions, after a cancel, `deleteAll`, and an upgrade.
@Suite struct BacklinkCountTests {
    let folder = TemporaryFolder()

    func open(_ name: String = "counts.realm") throws -> Realm {
        try Realm(configuration: folder.configuration([BCDog.self, BCPerson.self], name: name))
    }

    /// Every dog's four counts read from the stored counts, from the backlinks, and by
    /// iterating the linking objects; they must all agree.
    func checkCounts(_ realm: Realm, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for dog in realm.objects(BCDog.self) {
            realm.core.readsStoredBacklinkCounts = true
            let stored = [dog.owners.count, dog.listOwners.count, dog.setOwners.count, dog.mapOwners.count]
            realm.core.readsStoredBacklinkCounts = false
            let summed = [dog.owners.count, dog.listOwners.count, dog.setOwners.count, dog.mapOwners.count]
            realm.core.readsStoredBacklinkCounts = true
            let iterated = [Array(dog.owners).count, Array(dog.listOwners).count, Array(dog.setOwners).count,
                            Array(dog.mapOwners).count]
            #expect(stored == summed, "dog \(dog.id) \(context)", sourceLocation: sourceLocation)
            #expect(stored == iterated, "dog \(dog.id) \(context)", sourceLocation: sourceLocation)
        }
    }

    /// One random link change (or a delete) among `dogs` and `people`.
    func randomChange(_ realm: Realm, _ random: inout SplitMix64, nextId: inout Int) {
        let dogs = Array(realm.objects(BCDog.self))
        let people = Array(realm.objects(BCPerson.self))
        guard let dog = dogs.randomElement(using: &random), let person = people.randomElement(using: &random) else {
            return
        }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: person.dog = dog
        case 1: person.dog = nil
        case 2, 3: person.dogs.append(dog)
        case 4: if !person.dogs.isEmpty { person.dogs.remove(at: Int.random(in: 0..<person.dogs.count, using: &random)) }
        case 5: person.dogSet.insert(dog)
        case 6: person.dogSet.remove(dog)
        case 7: person.dogMap["k\(Int.random(in: 0..<4, using: &random))"] = dog
        case 8: person.dogMap.removeObject(for: "k\(Int.random(in: 0..<4, using: &random))")
        case 9: realm.delete(dog)
        case 10: realm.delete(person)
        default:
            // New objects: a run of dogs crosses count blocks (256 keys each) now and then.
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                nextId += 1
                realm.add(BCDog(value: ["id": nextId, "age": nextId % 50]))
            }
            nextId += 1
            realm.add(BCPerson(value: ["id": nextId, "dogs": [dog, dog]]))
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func storedCountsAlwaysEqualTheLinks(seed: UInt64) throws {
        let realm = try open()
        var random = SplitMix64(seed: seed)
        var nextId = 0
        try realm.write {
            for _ in 0..<300 {
                nextId += 1
                realm.add(BCDog(value: ["id": nextId]))
            }
            for _ in 0..<30 {
                nextId += 1
                realm.add(BCPerson(value: ["id": nextId]))
            }
        }
        for round in 0..<40 {
            realm.beginWrite()
            for step in 0..<Int.random(in: 1...30, using: &random) {
                randomChange(realm, &random, nextId: &nextId)
                // Counts read inside the write see its changes so far.
                if step % 7 == 0 { checkCounts(realm, "inside write \(round)") }
            }
            if round % 5 == 4 {
                realm.cancelWrite()
            } else {
                try realm.commitWrite()
            }
            #expect(realm._consistencyProblems().isEmpty, "round \(round)")
            checkCounts(realm, "after round \(round)")
        }
        // Another Realm of the file (its own snapshot) reads the same counts.
        let other = try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([BCDog.self, BCPerson.self], name: "counts.realm"))
            return Array(realm.objects(BCDog.self)).map { $0.listOwners.count }
        }
        #expect(other == Array(realm.objects(BCDog.self)).map { $0.listOwners.count })
    }

    @Test func countsInQueriesReadTheStoredCounts() throws {
        let realm = try open()
        try realm.write {
            let dogs = (1...600).map { BCDog(value: ["id": $0]) }
            realm.add(dogs)
            for index in 0..<100 {
                realm.add(BCPerson(value: ["id": 1000 + index, "dogs": [dogs[index * 5], dogs[index * 5], dogs[599]]]))
            }
        }
        #expect(realm.objects(BCDog.self).filter("listOwners.@count == 2").count == 100)
        #expect(realm.objects(BCDog.self).filter("listOwners.@count == 100").count == 1)
        #expect(realm.objects(BCDog.self).filter("listOwners.@count == 0").count == 499)
        try realm.write { realm.delete(realm.objects(BCPerson.self).filter("id < 1050")) }
        #expect(realm.objects(BCDog.self).filter("listOwners.@count == 2").count == 50)
        #expect(realm.object(ofType: BCDog.self, forPrimaryKey: 600)?.listOwners.count == 50)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aKeptLinkingObjectsValueCountsLiveAcrossWritesAndRefreshes() throws {
        let realm = try open()
        try realm.write { realm.add((1...300).map { BCDog(value: ["id": $0]) }) }
        let dog = try #require(realm.object(ofType: BCDog.self, forPrimaryKey: 7))
        let owners = dog.listOwners
        #expect(owners.count == 0)
        try realm.write {
            realm.add(BCPerson(value: ["id": 1000, "dogs": [dog]]))
            #expect(owners.count == 1)
        }
        #expect(owners.count == 1)
        // Another thread's commit, seen after a refresh.
        try onOtherThread {
            let other = try Realm(configuration: folder.configuration([BCDog.self, BCPerson.self], name: "counts.realm"))
            try other.write {
                let dog = other.object(ofType: BCDog.self, forPrimaryKey: 7)
                other.add(BCPerson(value: ["id": 1001, "dogs": [dog, dog]]))
            }
        }
        realm.refresh()
        #expect(owners.count == 3)
        realm.beginWrite()
        realm.delete(realm.objects(BCPerson.self).filter("id == 1001"))
        #expect(owners.count == 1)
        realm.cancelWrite()
        #expect(owners.count == 3)
    }

    @Test func deleteAllEmptiesTheStoredCounts() throws {
        let realm = try open()
        try realm.write {
            let dog = BCDog(value: ["id": 1])
            realm.add(BCPerson(value: ["id": 2, "dog": dog, "dogs": [dog]]))
        }
        try realm.write {
            realm.deleteAll()
            realm.add(BCDog(value: ["id": 1]))
        }
        #expect(realm.objects(BCDog.self).first?.owners.count == 0)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func theCheckerReportsAWrongStoredCount() throws {
        let realm = try open()
        try realm.write { realm.add(BCPerson(value: ["id": 2, "dog": BCDog(value: ["id": 1])])) }
        guard let counts = realm.core.file.backlinkCounts else {
            Issue.record("no stored counts")
            return
        }
        try realm.write {
            let txn = try #require(realm.core.writeTransaction)
            let cursor = try txn.cursor(counts)
            let (key, value) = try #require(cursor.first())
            var damaged = Array(value)
            damaged[damaged.firstIndex { $0 != 0 } ?? 0] &+= 1
            let keyBytes = Array(key)
            _ = try keyBytes.withUnsafeBytes { k in try damaged.withUnsafeBytes { try txn.put(counts, key: k, value: $0) } }
        }
        let problems = realm._consistencyProblems()
        #expect(problems.contains { $0.contains("backlink count of") }, "\(problems)")
    }

    /// A file of format 3 (written before counts were stored): the current format without the
    /// `backlinkCounts` database and with format 3 in its catalog.
    func makeFormatThreeFile(_ name: String) throws -> URL {
        let url = folder.file(name)
        do {
            let realm = try Realm(configuration: folder.configuration([BCDog.self, BCPerson.self], name: name))
            try realm.write {
                let dogs = (1...300).map { BCDog(value: ["id": $0]) }
                realm.add(dogs)
                for index in 0..<40 {
                    realm.add(BCPerson(value: ["id": 1000 + index, "dog": dogs[index], "dogs": [dogs[index], dogs[299]],
                                               "dogSet": [dogs[index + 1]], "dogMap": ["a": dogs[index + 2]]]))
                }
            }
        }
        let environment = try Environment(path: url.path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        let txn = try environment.beginWrite()
        let meta = try #require(try txn.database(named: "meta", create: false))
        var catalog = try FileState.readCatalog(txn, meta: meta, path: url.path)
        catalog.format = 3
        try FileState.writeCatalog(catalog, txn: txn, meta: meta)
        let counts = try #require(try txn.database(named: FileState.backlinkCountsName, create: false))
        #if TRELLIS_LMDB
        #expect(mdb_drop(txn.handle, counts, 1) == 0)
        #else
        try txn.drop(counts)
        #endif
        try txn.commit()
        return url
    }

    @Test func aFormatThreeFileGetsItsCountsOnTheFirstWritableOpen() throws {
        let url = try makeFormatThreeFile("three.realm")
        let realm = try open("three.realm")
        #expect(realm.core.file.catalog.format == SchemaCatalog.formatVersion)
        #expect(realm.core.file.backlinkCounts != nil)
        #expect(realm._consistencyProblems().isEmpty)
        checkCounts(realm, "after the upgrade")
        #expect(realm.object(ofType: BCDog.self, forPrimaryKey: 300)?.listOwners.count == 40)
        _ = url
    }

    @Test func aReadOnlyFormatThreeFileCountsFromTheBacklinks() throws {
        let url = try makeFormatThreeFile("three-read-only.realm")
        var configuration = Realm.Configuration(fileURL: url, readOnly: true, objectTypes: [BCDog.self, BCPerson.self])
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.core.file.catalog.format == 3)
        #expect(realm.core.file.backlinkCounts == nil)
        #expect(realm.object(ofType: BCDog.self, forPrimaryKey: 300)?.listOwners.count == 40)
        #expect(realm.object(ofType: BCDog.self, forPrimaryKey: 1)?.owners.count == 1)
    }
}
