import Foundation
import Testing
@testable import Trellis

/// Frozen snapshots, thread-safe references, actor-confined Realms and async change sequences.
@Suite struct FreezeAndActorTests {
    let folder = TemporaryFolder()

    func openRealm() throws -> Realm {
        try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
    }

    @Test func aFrozenObjectKeepsItsValuesAfterLaterCommitsAndAnyThreadMayReadIt() throws {
        let realm = try openRealm()
        let owner = Owner("tim", age: 30)
        owner.dog = Pet("rex")
        try realm.write { realm.add(owner) }
        let frozen = Frozen(owner.freeze())
        try realm.write { owner.age = 31; owner.dog?.name = "max" }
        #expect(frozen.value.isFrozen && !owner.isFrozen)
        #expect(frozen.value.age == 30)
        // Eight threads read the same frozen object at once.
        let ages = LockedBox<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<200 { _ = frozen.value.dog?.name }
            ages.mutate { $0.append(frozen.value.age) }
        }
        #expect(ages.get() == Array(repeating: 30, count: 8))
        #expect(frozen.value.dog?.name == "rex")
        #expect(owner.age == 31)
    }

    @Test func thawingGivesTheLiveObjectOrNilOnceDeleted() throws {
        let realm = try openRealm()
        let pet = Pet("rex")
        try realm.write { realm.add(pet) }
        let frozen = pet.freeze()
        try realm.write { pet.age = 4 }
        #expect(frozen.age == 0)
        #expect(frozen.thaw()?.age == 4)
        #expect(frozen.thaw()?.isFrozen == false)
        try realm.write { realm.delete(pet) }
        #expect(frozen.thaw() == nil)
        #expect(frozen.name == "rex")
    }

    @Test func frozenResultsAndListsAreSnapshots() throws {
        let realm = try openRealm()
        let owner = Owner("tim")
        owner.dogs.append(Pet("a"))
        try realm.write { realm.add(owner) }
        let frozenResults = realm.objects(Pet.self).freeze()
        let frozenList = owner.dogs.freeze()
        let frozenRealm = realm.freeze()
        try realm.write { owner.dogs.append(Pet("b")) }
        #expect(frozenResults.count == 1 && frozenResults.isFrozen)
        #expect(frozenList.count == 1 && frozenList.isFrozen)
        #expect(frozenRealm.isFrozen && frozenRealm.objects(Pet.self).count == 1)
        #expect(frozenRealm.thaw().objects(Pet.self).count == 2)
        #expect(frozenList.thaw()?.count == 2)
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func writingAFrozenObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            else { return }
            let pet = Pet("rex")
            try? realm.write { realm.add(pet) }
            let frozen = pet.freeze()
            try? realm.write { frozen.name = "max" }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Attempting to modify a frozen object - call thaw on the Object instance first."))
    }

    @Test func freezingAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Pet("rex").freeze()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Unmanaged objects cannot be frozen."))
    }

    @Test func aThreadSafeReferenceResolvesOnAnotherThreadOnce() throws {
        let realm = try openRealm()
        let pet = Pet("rex")
        try realm.write { realm.add(pet) }
        let reference = ThreadSafeReference(to: pet)
        let resultsReference = ThreadSafeReference(to: realm.objects(Pet.self).filter("name == 'rex'"))
        let configuration = realm.configuration
        let names = try onOtherThread { () -> [String] in
            let other = try Realm(configuration: configuration)
            let resolved = other.resolve(reference)
            let results = other.resolve(resultsReference)
            return [resolved?.name ?? "nil", "\(results?.count ?? -1)"]
        }
        #expect(names == ["rex", "1"])
    }

    @Test func resolvingAReferenceTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            else { return }
            let pet = Pet("rex")
            try? realm.write { realm.add(pet) }
            let reference = ThreadSafeReference(to: pet)
            _ = realm.resolve(reference)
            _ = realm.resolve(reference)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can only resolve a thread safe reference once."))
    }

    /// An actor owning its Realm, as the README shows.
    actor PetStore {
        var realm: Realm!
        init(_ configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
        }

        func add(_ name: String) async throws {
            try await realm.asyncWrite { realm.add(Pet(name)) }
        }

        func frozenPets() -> Frozen<Results<Pet>> {
            Frozen(realm.objects(Pet.self).sorted(byKeyPath: "name").freeze())
        }
    }

    actor Reporter {
        func names(of pets: Frozen<Results<Pet>>) -> [String] { pets.value.map(\.name) }
    }

    @Test func anActorConfinedRealmWritesAsynchronouslyAndSharesFrozenResults() async throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let store = try await PetStore(configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 { group.addTask { try await store.add("pet \(index)") } }
            try await group.waitForAll()
        }
        let frozen = await store.frozenPets()
        let names = await Reporter().names(of: frozen)
        #expect(names.count == 20)
        #expect(names.first == "pet 0")
    }

    /// Consumes change sequences inside an actor, with a Realm opened for it.
    actor Watcher {
        var realm: Realm?

        func observePets(_ configuration: Realm.Configuration, into inbox: LockedBox<[String]>) async throws
            -> NotificationToken
        {
            let realm = try await Realm.open(configuration: configuration)
            self.realm = realm
            return await realm.objects(Pet.self).observe(on: self) { watcher, change in
                watcher.assertIsolated()
                let entry: String
                switch change {
                case .initial(let pets): entry = "initial \(pets.count)"
                case .update(let pets, _, let insertions, _): entry = "insert \(insertions) \(pets.first?.name ?? "")"
                case .error: entry = "error"
                }
                inbox.mutate { $0.append(entry) }
            }
        }

        func firstTwoResultsChanges(_ configuration: Realm.Configuration, _ store: PetStore) async throws -> [String] {
            let realm = try await Realm.open(configuration: configuration)
            var seen: [String] = []
            for await change in realm.objects(Pet.self).changes {
                switch change {
                case .initial(let pets):
                    seen.append("initial \(pets.count)")
                    try await store.add("rex")
                case .update(let pets, _, let insertions, _):
                    seen.append("insert \(insertions) \(pets.isFrozen) \(pets.first?.name ?? "")")
                case .error: break
                }
                if seen.count == 2 { break }
            }
            return seen
        }

        /// The first change of an owner whose dog is set by another thread.
        func linkChange(_ configuration: Realm.Configuration) async throws -> [String] {
            let realm = try await Realm.open(configuration: configuration)
            let owner = Owner("tim")
            try await realm.asyncWrite { realm.add(owner) }
            let reference = ThreadSafeReference(to: owner)
            var changes = owner.changes.makeAsyncIterator()
            let writer = Task.detached {
                let other = try Realm(configuration: configuration)
                guard let owner = other.resolve(reference) else { return }
                try other.write { owner.dog = Pet("rex") }
            }
            var seen: [String] = []
            if case .change(_, let properties)? = await changes.next(isolation: self) {
                for property in properties {
                    let new = property.newValue as? Pet
                    seen.append("\(property.name) \(property.oldValue.map { "\($0)" } ?? "nil") -> "
                        + "\(new?.name ?? "?") \(new?.isFrozen == true ? "frozen" : "live")")
                }
            }
            try await writer.value
            return seen
        }

        /// Iterates the pets' changes until the task is cancelled; returns how many it saw.
        func iterateForever(_ configuration: Realm.Configuration, started: LockedBox<Bool>) async throws -> Int {
            let realm = try await Realm.open(configuration: configuration)
            var count = 0
            for await _ in realm.objects(Pet.self).changes {
                count += 1
                started.set(true)
            }
            return count
        }

        func objectChanges(_ configuration: Realm.Configuration) async throws -> [String] {
            let realm = try await Realm.open(configuration: configuration)
            let pet = Pet("rex")
            try await realm.asyncWrite { realm.add(pet) }
            // Two writes from another thread, the second only after the first was seen (two
            // commits made before a delivery are reported together, as in Realm).
            func write(_ change: @escaping @Sendable (Realm, Pet) -> Void) -> Task<Void, any Error> {
                let reference = ThreadSafeReference(to: pet)
                return Task.detached {
                    let other = try Realm(configuration: configuration)
                    guard let pet = other.resolve(reference) else { return }
                    try other.write { change(other, pet) }
                }
            }
            let deletion = ThreadSafeReference(to: pet)
            // Observing starts when the iterator is made: before the writer runs.
            var changes = pet.changes.makeAsyncIterator()
            let writes = [write { _, pet in pet.age = 3 }]
            var deleting: Task<Void, any Error>?
            var seen: [String] = []
            while let change = await changes.next(isolation: self) {
                switch change {
                case .change(let object, let properties):
                    seen.append("\(properties.map(\.name)) \(object.isFrozen)")
                    deleting = Task.detached {
                        let other = try Realm(configuration: configuration)
                        guard let pet = other.resolve(deletion) else { return }
                        try other.write { other.delete(pet) }
                    }
                case .deleted: seen.append("deleted")
                case .error: break
                }
            }
            for task in writes { try await task.value }
            try await deleting?.value
            return seen
        }
    }

    @Test func observeOnAnActorDeliversInsideTheActorAfterAnotherThreadCommits() async throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let store = try await PetStore(configuration)
        let inbox = LockedBox<[String]>([])
        let watcher = Watcher()
        let token = try await watcher.observePets(configuration, into: inbox)
        for _ in 0..<500 where inbox.get().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await store.add("rex")
        for _ in 0..<500 where inbox.get().count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(inbox.get() == ["initial 0", "insert [0] rex"])
        token.invalidate()
    }

    @Test func cancellingTheTaskThatIteratesChangesEndsTheObservation() async throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let store = try await PetStore(configuration)
        let hub = try Realm(configuration: configuration).core.file.observation
        let started = LockedBox(false)
        let iterating = Task {
            try await Watcher().iterateForever(configuration, started: started)
        }
        for _ in 0..<500 where !started.get() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(hub.registeredCount == 1)
        iterating.cancel()
        _ = try await iterating.value
        try await store.add("after")  // the cancelled stream learns it is finished
        for _ in 0..<500 where hub.registeredCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(hub.registeredCount == 0)
    }

    @Test func resultsChangesIsAnAsyncSequenceOfFrozenSnapshots() async throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        let store = try await PetStore(configuration)
        let seen = try await Watcher().firstTwoResultsChanges(configuration, store)
        #expect(seen == ["initial 0", "insert [0] true rex"])
    }

    @Test func linkValuesInObjectChangesAreFrozen() async throws {
        let seen = try await Watcher().linkChange(folder.configuration([Owner.self, Pet.self]))
        #expect(seen == ["dog nil -> rex frozen"])
    }

    @Test func objectChangesEndWithDeletion() async throws {
        let seen = try await Watcher().objectChanges(folder.configuration([Owner.self, Pet.self]))
        #expect(seen == ["[\"age\"] true", "deleted"])
    }
}
