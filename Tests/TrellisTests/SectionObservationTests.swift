import Foundation
import Testing
@testable import Trellis

/// One section observed on its own, `RealmSectionedResult` as generic code uses it, sections
/// handed to another thread, and the actor form of `observe` (Realm Swift's behaviour).
@Suite struct SectionObservationTests {
    let folder = TemporaryFolder()

    func contacts() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Acquaintance.self]))
        try realm.write {
            for (name, group) in [("Ann", "a"), ("Ben", "b"), ("Bo", "b"), ("Cy", "c")] {
                realm.add(Acquaintance(value: ["name": name, "group": group]))
            }
        }
        return realm
    }

    static func describe<C>(_ change: SectionedResultsChange<C>) -> String where C: Collection {
        switch change {
        case .initial(let collection): return "initial \(collection.count)"
        case .update(let collection, let deletions, let insertions, let modifications, let sectionsToInsert,
                     let sectionsToDelete):
            let paths = { (paths: [IndexPath]) in paths.map { "\($0.section).\($0.item)" } }
            return "count \(collection.count) d\(paths(deletions)) i\(paths(insertions)) m\(paths(modifications)) "
                + "+\(Array(sectionsToInsert)) -\(Array(sectionsToDelete))"
        }
    }

    @Test func aSectionReportsOnlyItsOwnChangesInItsOldAndNewPositions() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group, ascending: true)
        let a = LockedBox<[String]>([]), b = LockedBox<[String]>([])
        let tokenA = sections[0].observe(keyPaths: [\Acquaintance.name]) { change in a.mutate { $0.append(Self.describe(change)) } }
        let tokenB = sections[1].observe(keyPaths: [\Acquaintance.name]) { change in b.mutate { $0.append(Self.describe(change)) } }
        realm.refresh()
        #expect(a.get() == ["initial 1"])
        #expect(b.get() == ["initial 2"])

        // Section a goes, one row of section b goes.
        try realm.write {
            realm.delete(realm.objects(Acquaintance.self).filter("name IN {'Ann', 'Ben'}"))
        }
        #expect(a.get().last == "count 0 d[] i[] m[] +[] -[0]")
        #expect(b.get().last == "count 1 d[\"1.0\"] i[] m[] +[] -[]")

        // A change in section c only: neither is told.
        try realm.write { realm.objects(Acquaintance.self).filter("name == 'Cy'").first?.name = "Cyd" }
        // A property the key paths leave out: not told either.
        try realm.write { realm.objects(Acquaintance.self).filter("name == 'Bo'").first?.age = 9 }
        #expect(a.get().count == 2)
        #expect(b.get().count == 2)

        // Section a comes back first: it is told; section b moves to position 1 unchanged.
        try realm.write { realm.add(Acquaintance(value: ["name": "Al", "group": "a"])) }
        #expect(a.get().last == "count 1 d[] i[\"0.0\"] m[] +[0] -[]")
        #expect(b.get().count == 2)
        // A renamed row of section b is a modification at its new position.
        try realm.write { realm.objects(Acquaintance.self).filter("name == 'Bo'").first?.name = "Bob" }
        #expect(b.get().last == "count 1 d[] i[] m[\"1.0\"] +[] -[]")
        tokenA.invalidate()
        tokenB.invalidate()
    }

    /// Generic code over Realm's protocol compiles and works for both kinds.
    func summary<S: RealmSectionedResult>(_ collection: S) -> String {
        "\(collection.count) frozen=\(collection.isFrozen) thawed=\(collection.freeze().thaw() != nil)"
    }

    @Test func sectionedResultsAndSectionsAreRealmSectionedResults() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
        #expect(summary(sections) == "3 frozen=false thawed=true")
        #expect(summary(sections[1]) == "2 frozen=false thawed=true")
        #expect(summary(sections.freeze()) == "3 frozen=true thawed=true")
    }

    @Test func sectionsCanBeHandedToAnotherThreadByReference() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
        let all = ThreadSafeReference(to: sections)
        let b = ThreadSafeReference(to: sections[1])
        let configuration = realm.configuration
        let seen = try onOtherThread { () -> [String] in
            let other = try Realm(configuration: configuration)
            let resolvedAll = try #require(other.resolve(all))
            let resolvedB = try #require(other.resolve(b))
            return resolvedAll.allKeys + [resolvedB.key] + resolvedB.map(\.name).sorted()
        }
        #expect(seen == ["a", "b", "c", "b", "Ben", "Bo"])
    }

    /// Observes sections inside an actor, with a Realm opened for it.
    actor Watcher {
        var realm: Realm?

        func observeSections(_ configuration: Realm.Configuration, into inbox: LockedBox<[String]>) async throws
            -> NotificationToken
        {
            let realm = try await Realm.open(configuration: configuration)
            self.realm = realm
            let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
            return await sections.observe(keyPaths: [\Acquaintance.name], on: self) { watcher, change in
                watcher.assertIsolated()
                inbox.mutate { $0.append(SectionObservationTests.describe(change)) }
            }
        }
    }

    @Test func sectionsCanBeObservedOnAnActor() async throws {
        let configuration = folder.configuration([Acquaintance.self])
        try onOtherThread {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for (name, group) in [("Ann", "a"), ("Ben", "b")] { realm.add(Acquaintance(value: ["name": name, "group": group])) }
            }
        }
        let inbox = LockedBox<[String]>([])
        let watcher = Watcher()
        let token = try await watcher.observeSections(configuration, into: inbox)
        var waitedForInitial = 0
        while inbox.get().isEmpty, waitedForInitial < 3_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
            waitedForInitial += 1
        }
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Acquaintance(value: ["name": "Cy", "group": "c"])) }
        }
        var waited = 0
        while inbox.get().count < 2, waited < 3_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
            waited += 1
        }
        #expect(inbox.get() == ["initial 2", "count 3 d[] i[\"2.0\"] m[] +[2] -[]"])
        token.invalidate()
    }
}
