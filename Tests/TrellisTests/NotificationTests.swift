import Foundation
import Testing
@testable import Trellis

/// Change notifications: computed from each commit's recorded changes, with Realm's indices.
@Suite struct NotificationTests {
    let folder = TemporaryFolder()

    func openRealm() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
    }

    /// Records every collection change as a readable value.
    final class CollectionLog<C> {
        var entries: [String] = []
        func record(_ change: RealmCollectionChange<C>) {
            switch change {
            case .initial: entries.append("initial")
            case .update(_, let deletions, let insertions, let modifications):
                entries.append("d\(deletions) i\(insertions) m\(modifications)")
            case .error(let error): entries.append("error \(error)")
            }
        }
    }

    func addPets(_ realm: Realm, _ names: [String], ages: [Int]? = nil) throws -> [Pet] {
        try realm.write {
            names.enumerated().map { index, name in
                let pet = Pet(name, age: ages?[index] ?? index)
                realm.add(pet)
                return pet
            }
        }
    }

    // MARK: - Results

    @Test func resultsReportIndexExactDeletionsInsertionsAndModificationsOfOneCommit() throws {
        let realm = try openRealm()
        let pets = try addPets(realm, ["a", "b", "c", "d", "e"])
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).observe { log.record($0) }
        realm.refresh()
        #expect(log.entries == ["initial"])
        try realm.write {
            realm.delete(pets[1])
            pets[3].age = 30
            realm.add(Pet("f"))
        }
        #expect(log.entries == ["initial", "d[1] i[4] m[3]"])
        token.invalidate()
    }

    @Test func aSortedResultWhoseKeyChangedMovesAsADeletionAndAnInsertion() throws {
        let realm = try openRealm()
        let pets = try addPets(realm, ["a", "b", "c"], ages: [1, 2, 3])
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).sorted(byKeyPath: "age").observe { log.record($0) }
        realm.refresh()
        try realm.write { pets[0].age = 10 }
        #expect(log.entries == ["initial", "d[0] i[2] m[]"])
        try realm.write { pets[2].name = "C" }
        #expect(log.entries.last == "d[] i[] m[1]")
        token.invalidate()
    }

    @Test func filteredResultsGainAndLoseObjectsWhenAModificationChangesWhetherTheyMatch() throws {
        let realm = try openRealm()
        let pets = try addPets(realm, ["a", "b", "c"], ages: [1, 7, 2])
        let log = CollectionLog<Results<Pet>>()
        let results = realm.objects(Pet.self).filter("age > 5")
        let token = results.observe { log.record($0) }
        realm.refresh()
        try realm.write {
            pets[0].age = 9   // enters
            pets[1].age = 0   // leaves
        }
        #expect(log.entries == ["initial", "d[0] i[0] m[]"])
        #expect(results.map(\.name) == ["a"])
        token.invalidate()
    }

    @Test func aCommitThatTouchesNothingTheResultsDependOnDeliversNothing() throws {
        let realm = try openRealm()
        _ = try addPets(realm, ["a"])
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).filter("age > 5").observe { log.record($0) }
        realm.refresh()
        try realm.write { realm.add(Owner("o")) }
        #expect(log.entries == ["initial"])
        token.invalidate()
    }

    @Test func deepDefaultObservationReportsAChangeToALinkedObject() throws {
        let realm = try openRealm()
        let owner = Owner("o")
        owner.dog = Pet("rex")
        try realm.write { realm.add(owner) }
        let log = CollectionLog<Results<Owner>>()
        let token = realm.objects(Owner.self).observe { log.record($0) }
        realm.refresh()
        try realm.write { owner.dog?.age = 4 }
        #expect(log.entries == ["initial", "d[] i[] m[0]"])
        token.invalidate()
    }

    /// Realm hands the observed `Results` themselves to a block on their own thread
    /// (ResultsTests.testNotificationBlockUpdating expects `results == collection`).
    @Test func resultsObservedOnTheirOwnThreadAreHandedToTheBlockAsThemselves() throws {
        let realm = try openRealm()
        let pets = realm.objects(Pet.self)
        var handed: [Bool] = []
        let token = pets.observe { change in
            switch change {
            case .initial(let results), .update(let results, _, _, _): handed.append(results == pets)
            case .error: break
            }
        }
        _ = try addPets(realm, ["rex"])
        #expect(handed == [true, true])
        token.invalidate()
    }

    // MARK: - Objects

    /// Records an object's changes as "name: property old -> new" and "deleted".
    func observeChanges(of pet: Pet, into changes: LockedBox<[String]>) -> NotificationToken {
        pet.observe { change in
            switch change {
            case .change(let object, let properties):
                for property in properties {
                    changes.mutate {
                        $0.append("\(object.name): \(property.name) \(property.oldValue ?? "nil") -> \(property.newValue ?? "nil")")
                    }
                }
            case .deleted: changes.mutate { $0.append("deleted") }
            case .error: changes.mutate { $0.append("error") }
            }
        }
    }

    /// Realm: the old value "is not supplied if the change happened on the same thread as the
    /// notification" (ObjectTests.testModifyObservedObjectLocally expects nil).
    @Test func objectObservationOfItsRealmsOwnWritesReportsNewValuesWithoutOldOnesThenDeletion() throws {
        let realm = try openRealm()
        let pet = try addPets(realm, ["rex"])[0]
        let changes = LockedBox<[String]>([])
        let token = observeChanges(of: pet, into: changes)
        try realm.write { pet.age = 5 }
        try realm.write { pet.name = "max" }
        try realm.write { realm.delete(pet) }
        #expect(changes.get() == ["rex: age nil -> 5", "max: name nil -> max", "deleted"])
        token.invalidate()
    }

    @Test func objectObservationOfAnotherThreadsWritesReportsOldAndNewValuesThenDeletion() throws {
        let realm = try openRealm()
        _ = try addPets(realm, ["rex"])
        let pet = try #require(realm.objects(Pet.self).first)
        let changes = LockedBox<[String]>([])
        let token = observeChanges(of: pet, into: changes)
        let configuration = realm.configuration
        for write in [{ (pet: Pet) in pet.age = 5 }, { $0.name = "max" }, { $0.realm?.delete($0) }] as [@Sendable (Pet) -> Void] {
            try onOtherThread {
                let other = try Realm(configuration: configuration)
                try other.write { other.objects(Pet.self).first.map(write) }
            }
            realm.refresh()
        }
        #expect(changes.get() == ["rex: age 0 -> 5", "max: name rex -> max", "deleted"])
        token.invalidate()
    }

    @Test func observingAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Pet("x").observe { _ in }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Only objects which are managed by a Realm support change notifications"))
    }

    @Test func observingInsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            else { return }
            realm.beginWrite()
            _ = realm.objects(Pet.self).observe { _ in }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot register notification blocks from within write transactions."))
    }

    /// Names of the properties each notification reported.
    final class PropertyLog {
        var entries: [[String]] = []
        func record<T>(_ change: ObjectChange<T>) {
            switch change {
            case .change(_, let properties): entries.append(properties.map(\.name))
            case .deleted: entries.append(["<deleted>"])
            case .error: entries.append(["<error>"])
            }
        }
    }

    @Test func aLinkKeyPathIsShallowButALinkedPropertyKeyPathFollowsTheLink() throws {  // #185
        let realm = try openRealm()
        let owner = Owner("tim")
        owner.dog = Pet("rex")
        try realm.write { realm.add(owner) }
        let shallow = PropertyLog(), deep = PropertyLog()
        let t1 = owner.observe(keyPaths: ["dog"]) { shallow.record($0) }
        let t2 = owner.observe(keyPaths: ["dog.name"]) { deep.record($0) }
        try realm.write { owner.dog?.name = "max" }
        try realm.write { owner.name = "tom" }
        #expect(shallow.entries.isEmpty)
        #expect(deep.entries == [["dog"]])
        try realm.write { owner.dog = Pet("fido") }
        #expect(shallow.entries == [["dog"]])
        #expect(deep.entries == [["dog"], ["dog"]])
        t1.invalidate()
        t2.invalidate()
    }

    @Test func backlinkKeyPathsFireForNewLinksAndForTheOriginsProperties() throws {  // #186
        let realm = try openRealm()
        let pet = try addPets(realm, ["rex"])[0]
        let first = Owner("tim")
        try realm.write {
            realm.add(first)
            first.dog = pet
        }
        let owners = PropertyLog(), ownerNames = PropertyLog()
        let t1 = pet.observe(keyPaths: ["owners"]) { owners.record($0) }
        let t2 = pet.observe(keyPaths: ["owners.name"]) { ownerNames.record($0) }
        try realm.write { pet.name = "max" }
        try realm.write { first.age = 40 }
        #expect(owners.entries.isEmpty)
        #expect(ownerNames.entries.isEmpty)
        try realm.write { first.name = "tom" }
        #expect(owners.entries.isEmpty)
        #expect(ownerNames.entries == [["owners"]])
        try realm.write { realm.add(Owner(value: ["name": "ann", "dog": pet])) }
        #expect(owners.entries == [["owners"]])
        t1.invalidate()
        t2.invalidate()
    }

    @Test func appendingToAListFromAnotherThreadNotifiesTheOwnerAfterRefresh() throws {  // #187
        let realm = try openRealm()
        let owner = Owner("tim")
        try realm.write { realm.add(owner) }
        let log = PropertyLog()
        let token = owner.observe { log.record($0) }
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.objects(Owner.self).first?.dogs.append(Pet("rex")) }
        }
        #expect(log.entries.isEmpty)
        realm.refresh()
        #expect(log.entries == [["dogs"]])
        token.invalidate()
    }

    @Test func resultsKeyPathThroughALinkReportsBothOriginsAndIgnoresOtherProperties() throws {  // #188
        let realm = try openRealm()
        let shared = Pet("rex")
        try realm.write {
            realm.add(Owner(value: ["name": "a", "dog": shared]))
            realm.add(Owner(value: ["name": "b", "dog": shared]))
        }
        let log = CollectionLog<Results<Owner>>()
        let token = realm.objects(Owner.self).observe(keyPaths: ["dog.age"]) { log.record($0) }
        realm.refresh()
        try realm.write { shared.age = 3 }
        #expect(log.entries == ["initial", "d[] i[] m[0, 1]"])
        try realm.write { realm.objects(Owner.self).first?.name = "z" }
        #expect(log.entries.count == 2)
        token.invalidate()
    }

    // MARK: - Collections

    @Test func listObservationReportsAppendsRemovalsReplacementsAndElementChanges() throws {
        let realm = try openRealm()
        let owner = Owner("tim")
        owner.dogs.append(objectsIn: [Pet("a"), Pet("b"), Pet("c")])
        try realm.write { realm.add(owner) }
        let log = CollectionLog<List<Pet>>()
        let token = owner.dogs.observe { log.record($0) }
        realm.refresh()
        try realm.write { owner.dogs.append(Pet("d")) }
        try realm.write { owner.dogs.remove(at: 0) }
        try realm.write { owner.dogs[1] = Pet("x") }
        try realm.write { owner.dogs[0].age = 9 }
        try realm.write { owner.name = "unrelated" }
        #expect(log.entries == ["initial", "d[] i[3] m[]", "d[0] i[] m[]", "d[] i[] m[1]", "d[] i[] m[0]"])
        token.invalidate()
    }

    @Test func listOfValuesObservationReportsReplacementsAsModifications() throws {
        let realm = try openRealm()
        let owner = Owner("tim")
        owner.tags.append(objectsIn: ["a", "b", "a"])
        try realm.write { realm.add(owner) }
        let log = CollectionLog<List<String>>()
        let token = owner.tags.observe { log.record($0) }
        realm.refresh()
        try realm.write { owner.tags[2] = "z" }
        try realm.write { owner.tags.insert("q", at: 0) }
        try realm.write { realm.delete(owner) }
        #expect(log.entries == ["initial", "d[] i[] m[2]", "d[] i[0] m[]", "d[0, 1, 2, 3] i[] m[]"])
        token.invalidate()
    }

    @Test func setMapAndLinkingObjectsObservation() throws {
        let realm = try openRealm()
        let owner = Owner("tim")
        let pet = Pet("rex")
        try realm.write { realm.add(owner); realm.add(pet) }
        let setLog = CollectionLog<MutableSet<Int>>()
        let backlinkLog = CollectionLog<LinkingObjects<Owner>>()
        var mapChanges: [String] = []
        let t1 = owner.scores.observe { setLog.record($0) }
        let t2 = pet.owners.observe { backlinkLog.record($0) }
        let t3 = owner.dogMap.observe { change in
            switch change {
            case .initial: mapChanges.append("initial")
            case .update(_, let deletions, let insertions, let modifications):
                mapChanges.append("d\(deletions) i\(insertions) m\(modifications)")
            case .error: mapChanges.append("error")
            }
        }
        realm.refresh()
        try realm.write {
            owner.scores.insert(5)
            owner.dogMap["best"] = pet
            owner.dog = pet
        }
        try realm.write { pet.age = 2 }
        try realm.write { owner.dogMap["best"] = nil as Pet? }
        try realm.write { owner.dogMap.removeObject(for: "best") }
        #expect(setLog.entries == ["initial", "d[] i[0] m[]"])
        // The owner links the pet (an insertion), then changes through its dog and its map
        // (deep default observation of the origin objects: modifications).
        #expect(backlinkLog.entries == ["initial", "d[] i[0] m[]", "d[] i[] m[0]", "d[] i[] m[0]", "d[] i[] m[0]"])
        #expect(mapChanges == ["initial", "d[] i[\"best\"] m[]", "d[] i[] m[\"best\"]", "d[] i[] m[\"best\"]",
                               "d[\"best\"] i[] m[]"])
        t1.invalidate(); t2.invalidate(); t3.invalidate()
    }

    // MARK: - The Realm, tokens, skipping

    @Test func realmObserversHearDidChangeAfterEveryCommit() throws {
        let realm = try openRealm()
        var count = 0
        let token = realm.observe { notification, _ in if notification == .didChange { count += 1 } }
        try realm.write { realm.add(Pet("a")) }
        try realm.write { realm.add(Pet("b")) }
        #expect(count == 2)
        token.invalidate()
        try realm.write { realm.add(Pet("c")) }
        #expect(count == 2)
    }

    @Test func writeWithoutNotifyingSkipsOnlyTheGivenTokens() throws {
        let realm = try openRealm()
        let skippedLog = CollectionLog<Results<Pet>>(), heardLog = CollectionLog<Results<Pet>>()
        let skipped = realm.objects(Pet.self).observe { skippedLog.record($0) }
        let heard = realm.objects(Pet.self).observe { heardLog.record($0) }
        realm.refresh()
        try realm.write(withoutNotifying: [skipped]) { realm.add(Pet("a")) }
        try realm.write { realm.add(Pet("b")) }
        #expect(skippedLog.entries == ["initial", "d[] i[1] m[]"])
        #expect(heardLog.entries == ["initial", "d[] i[0] m[]", "d[] i[1] m[]"])
        skipped.invalidate()
        heard.invalidate()
    }

    @Test func anInvalidatedTokenHearsNothingMore() throws {
        let realm = try openRealm()
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).observe { log.record($0) }
        realm.refresh()
        token.invalidate()
        try realm.write { realm.add(Pet("a")) }
        #expect(log.entries == ["initial"])
    }

    @Test func anObserverBehindTheTrimmedChangeLogStillGetsCorrectIndices() throws {
        var configuration = folder.configuration([Owner.self, Pet.self])
        configuration.syncOnCommit = false
        let realm = try Realm(configuration: configuration)
        // A small log, and a hard limit the observer's needs cannot hold back.
        realm.core.file.changeLogLimits = ChangeLogLimits(byteBudget: 16 << 10, hardByteLimit: 32 << 10)
        _ = try addPets(realm, ["first"])
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).observe { log.record($0) }
        realm.refresh()
        let commits = 3000
        let fast = configuration
        try onOtherThread {
            let other = try Realm(configuration: fast)
            for index in 0..<commits { try other.write { other.add(Pet("p\(index)")) } }
        }
        let header = try #require(ChangeLogHeader.read(realm.core.transaction, meta: realm.core.file.meta))
        #expect(header.totalBytes <= 32 << 10)
        realm.refresh()
        // The log no longer reaches back to the observer's version: the results are compared
        // whole, and the object that was there already is reported as (possibly) modified.
        #expect(log.entries == ["initial", "d[] i\(Array(1...commits)) m[0]"])
        token.invalidate()
    }

    // MARK: - Other threads and processes

    @Test func aQueueObserverHearsACommitFromAnotherThread() throws {
        let realm = try openRealm()
        let queue = DispatchQueue(label: "observer")
        let log = LockedBox<[String]>([])
        let arrived = DispatchSemaphore(value: 0)
        let token = realm.objects(Pet.self).observe(on: queue) { change in
            switch change {
            case .initial(let results): log.mutate { $0.append("initial \(results.count)") }
            case .update(let results, _, let insertions, _):
                log.mutate { $0.append("i\(insertions) \(Array(results).map(\.name))") }
            case .error: break
            }
            arrived.signal()
        }
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Pet("from another thread")) }
        }
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        #expect(log.get() == ["initial 0", "i[0] [\"from another thread\"]"])
        token.invalidate()
    }

    /// Commits made while no Realm of the file observed anything (no notification bookkeeping
    /// then, issue 37 session 39) still reach observers added afterwards: in the same Realm,
    /// for commits of another Realm instance on another thread and for its own.
    @Test func anObserverAddedAfterCommitsWithoutObserversHearsEveryLaterCommit() throws {
        let realm = try openRealm()
        _ = try addPets(realm, ["a", "b"])
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Pet("c")) }
        }
        let log = CollectionLog<Results<Pet>>()
        let token = realm.objects(Pet.self).observe { log.record($0) }
        realm.refresh()
        #expect(log.entries == ["initial"])
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Pet("d")) }
        }
        realm.refresh()
        _ = try addPets(realm, ["e"])
        #expect(log.entries == ["initial", "d[] i[3] m[]", "d[] i[4] m[]"])
        #expect(realm.objects(Pet.self).count == 5)
        token.invalidate()
    }

    @Test func aCommitFromAnotherProcessIsDeliveredAfterRefresh() throws {
        let realm = try Realm(configuration: folder.configuration([ProcessDog.self]))
        let log = CollectionLog<Results<ProcessDog>>()
        let token = realm.objects(ProcessDog.self).observe { log.record($0) }
        realm.refresh()
        try runHelper(["write", realm.configuration.fileURL?.path ?? "", "3"])
        #expect(log.entries == ["initial"])
        realm.refresh()
        #expect(log.entries == ["initial", "d[] i[0, 1, 2] m[]"])
        token.invalidate()
    }
}

@Suite struct CollectionDiffTests {
    @Test func sequencesDiffToTheShortestEditScript() {
        // Myers' classic example: the shortest script has 5 edits; a deletion and an
        // insertion meeting at one place count as one replacement.
        let diff = CollectionDiff.ofSequences(old: Array("abcabba"), new: Array("cbabac"))
        #expect(diff.deletions.count + diff.insertions.count + 2 * diff.replaced.count == 5)
    }

    @Test func randomSequencesRoundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let old = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Int.random(in: 0...4, using: &generator) }
            let new = (0..<Int.random(in: 0...12, using: &generator)).map { _ in Int.random(in: 0...4, using: &generator) }
            let diff = CollectionDiff.ofSequences(old: old, new: new)
            var result = old.enumerated().filter { !diff.deletions.contains($0.offset) }.map { ($0.offset, $0.element) }
            // Replacements keep their place with the new value.
            for (oldIndex, newIndex) in diff.kept where diff.replaced.contains(oldIndex) {
                if let position = result.firstIndex(where: { $0.0 == oldIndex }) { result[position].1 = new[newIndex] }
            }
            var values = result.map(\.1)
            for index in diff.insertions { values.insert(new[index], at: index) }
            #expect(values == new, "old \(old) new \(new) diff \(diff)")
        }
    }

    @Test func uniqueElementsReportMovesAsDeletionAndInsertion() {
        let diff = CollectionDiff.ofUniqueElements(old: [1, 2, 3, 4], new: [2, 3, 4, 1, 5])
        #expect(diff.deletions == [0])
        #expect(diff.insertions == [3, 4])
    }
}
