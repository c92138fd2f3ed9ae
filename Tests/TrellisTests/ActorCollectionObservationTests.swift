import Foundation
import Testing
@testable import Trellis

/// `observe(on: actor)` on every observable kind (Realm's `observe(keyPaths:on:_isolation:_:)`):
/// the block runs isolated to the actor with values read from the actor's Realm, `.initial`
/// first, then an update per commit that changed what is observed; key paths filter; an
/// invalidated token delivers nothing more.
@Suite struct ActorCollectionObservationTests {
    let folder = TemporaryFolder()

    /// What is observed: the owner's `dogs`, `dogSet` and `dogMap`, `AnyRealmCollection(dogs)`,
    /// the pet's `listOwners` backlinks, `objects(Pet.self)` and the pet itself.
    enum Kind: String, CaseIterable, Sendable {
        case list, mutableSet, map, anyRealmCollection, linkingObjects, results, object
    }

    /// Receives notifications; every block checks that it runs isolated to this actor.
    actor Listener {}

    /// Owns the observed objects in a Realm opened for it: one owner whose list, set and map
    /// hold the pet "rex".
    actor Source {
        var realm: Realm!
        var owner: Owner!
        var pet: Pet!

        init(_ configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
            try populate()
        }

        private func populate() throws {
            try realm.write {
                let owner = realm.create(Owner.self, value: ["name": "tim"])
                let pet = realm.create(Pet.self, value: ["name": "rex"])
                owner.dogs.append(pet)
                owner.dogSet.insert(pet)
                owner.dogMap["a"] = pet
            }
            owner = realm.objects(Owner.self).first
            pet = realm.objects(Pet.self).first
        }

        /// Observes `kind` on `listener` with string key paths (`typed`: the same as key paths
        /// of the element class); each delivery appends its description to `inbox`.
        func observe(_ kind: Kind, keyPaths: [String]?, typed: Bool = false, on listener: Listener,
                     into inbox: LockedBox<[String]>) async -> NotificationToken
        {
            let record: @Sendable (isolated Listener, String) -> Void = { listener, entry in
                listener.preconditionIsolated()
                inbox.mutate { $0.append(entry) }
            }
            let petPaths = keyPaths?.map(Self.petKeyPath)
            switch kind {
            case .list:
                if typed, let petPaths { return await owner.dogs.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await owner.dogs.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .mutableSet:
                if typed, let petPaths { return await owner.dogSet.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await owner.dogSet.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .map:
                if typed, let petPaths { return await owner.dogMap.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await owner.dogMap.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .anyRealmCollection:
                let dogs = AnyRealmCollection(owner.dogs)
                if typed, let petPaths { return await dogs.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await dogs.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .linkingObjects:
                let ownerPaths = keyPaths?.map(Self.ownerKeyPath)
                if typed, let ownerPaths {
                    return await pet.listOwners.observe(keyPaths: ownerPaths, on: listener) { record($0, describe($1)) }
                }
                return await pet.listOwners.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .results:
                let pets = realm.objects(Pet.self)
                if typed, let petPaths { return await pets.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await pets.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            case .object:
                if typed, let petPaths { return await pet.observe(keyPaths: petPaths, on: listener) { record($0, describe($1)) } }
                return await pet.observe(keyPaths: keyPaths, on: listener) { record($0, describe($1)) }
            }
        }

        /// Changes a property of what `kind` holds: the pet's (the owner's for backlinks).
        func setProperty(_ name: String, of kind: Kind, to value: Any) throws {
            try realm.write {
                if kind == .linkingObjects { owner.setValue(value, forKey: name) } else { pet.setValue(value, forKey: name) }
            }
        }

        /// Adds an element to what `kind` holds (for the object: changes its name).
        func grow(_ kind: Kind) throws {
            try realm.write {
                let max = Pet("max")
                switch kind {
                case .list, .anyRealmCollection: owner.dogs.append(max)
                case .mutableSet: owner.dogSet.insert(max)
                case .map: owner.dogMap["b"] = max
                case .linkingObjects:
                    let ann = Owner("ann")
                    realm.add(ann)
                    ann.dogs.append(pet)
                case .results: realm.add(max)
                case .object: pet.name = "max"
                }
            }
        }

        static func petKeyPath(_ name: String) -> PartialKeyPath<Pet> {
            name == "name" ? \Pet.name : \Pet.age
        }

        static func ownerKeyPath(_ name: String) -> PartialKeyPath<Owner> {
            name == "name" ? \Owner.name : \Owner.age
        }
    }

    /// Waits (up to ~20 s) until `inbox` holds `count` entries.
    func waitFor(_ count: Int, in inbox: LockedBox<[String]>) async throws {
        for _ in 0..<2000 where inbox.get().count < count { try await Task.sleep(for: .milliseconds(10)) }
    }

    /// The first notification: `.initial` for collections; none for an object (so the tests
    /// expect nothing before the first change).
    func initial(_ kind: Kind) -> [String] { kind == .object ? [] : ["initial 1"] }

    @Test(arguments: Kind.allCases)
    func initialAndUpdatesAreDeliveredInsideTheActor(_ kind: Kind) async throws {
        let source = try await Source(folder.configuration([Owner.self, Pet.self]))
        let inbox = LockedBox<[String]>([])
        let token = await source.observe(kind, keyPaths: nil, on: Listener(), into: inbox)
        try await waitFor(initial(kind).count, in: inbox)
        try await source.grow(kind)
        try await waitFor(initial(kind).count + 1, in: inbox)
        let update: String = switch kind {
        case .list, .anyRealmCollection, .mutableSet, .linkingObjects, .results: "update -[] +[1] ~[] count 2"
        case .map: "update -[] +[\"b\"] ~[] count 2"
        case .object: "change [\"name\"] max"
        }
        #expect(inbox.get() == initial(kind) + [update])
        #expect(token.invalidate())
    }

    @Test(arguments: Kind.allCases, [false, true])
    func keyPathsLimitWhichPropertyChangesAreDelivered(_ kind: Kind, typed: Bool) async throws {
        let source = try await Source(folder.configuration([Owner.self, Pet.self]))
        let inbox = LockedBox<[String]>([])
        let token = await source.observe(kind, keyPaths: ["name"], typed: typed, on: Listener(), into: inbox)
        try await waitFor(initial(kind).count, in: inbox)
        try await source.setProperty("age", of: kind, to: 7)  // not observed: no notification
        try await source.setProperty("name", of: kind, to: "ben")
        try await waitFor(initial(kind).count + 1, in: inbox)
        let update: String = switch kind {
        case .list, .anyRealmCollection, .mutableSet, .linkingObjects, .results: "update -[] +[] ~[0] count 1"
        case .map: "update -[] +[] ~[\"a\"] count 1"
        case .object: "change [\"name\"] ben"
        }
        #expect(inbox.get() == initial(kind) + [update])
        token.invalidate()
    }

    @Test(arguments: Kind.allCases)
    func anInvalidatedTokenDeliversNothingMore(_ kind: Kind) async throws {
        let source = try await Source(folder.configuration([Owner.self, Pet.self]))
        let listener = Listener()
        let stopped = LockedBox<[String]>([]), fence = LockedBox<[String]>([])
        let token = await source.observe(kind, keyPaths: nil, on: listener, into: stopped)
        let fenceToken = await source.observe(.object, keyPaths: nil, on: listener, into: fence)
        try await waitFor(initial(kind).count, in: stopped)
        #expect(token.invalidate())
        #expect(!token.invalidate())
        try await source.grow(kind)
        try await source.setProperty("age", of: .object, to: 3)
        try await waitFor(1, in: fence)  // the change reached the listener's Realm
        try await Task.sleep(for: .milliseconds(100))
        #expect(stopped.get() == initial(kind))
        fenceToken.invalidate()
    }

    @Test func anObservationStartedByACancelledTaskRegistersNothing() async throws {
        let source = try await Source(folder.configuration([Owner.self, Pet.self]))
        let inbox = LockedBox<[String]>([])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await source.observe(.list, keyPaths: nil, on: Listener(), into: inbox)
        }
        let token = await task.value
        try await source.grow(.list)
        try await Task.sleep(for: .milliseconds(100))
        #expect(!token.invalidate())
        #expect(inbox.get().isEmpty)
    }

    @Test func aTokenMadeByItsInitializerObservesNothing() {
        #expect(!NotificationToken().invalidate())
    }
}

private func describe<C: RealmCollection>(_ change: RealmCollectionChange<C>) -> String {
    switch change {
    case .initial(let collection): "initial \(collection.count)"
    case .update(let collection, let deletions, let insertions, let modifications):
        "update -\(deletions) +\(insertions) ~\(modifications) count \(collection.count)"
    case .error(let error): "error \(error)"
    }
}

private func describe(_ change: RealmMapChange<Map<String, Pet?>>) -> String {
    switch change {
    case .initial(let map): "initial \(map.count)"
    case .update(let map, let deletions, let insertions, let modifications):
        "update -\(deletions) +\(insertions) ~\(modifications) count \(map.count)"
    case .error(let error): "error \(error)"
    }
}

private func describe(_ change: ObjectChange<Pet>) -> String {
    switch change {
    case .change(let pet, let properties): "change \(properties.map(\.name)) \(pet.name)"
    case .deleted: "deleted"
    case .error(let error): "error \(error)"
    }
}
