import Foundation
import Testing
@testable import Trellis

class Acquaintance: Object {
    @Persisted var name = ""
    @Persisted var group = ""
    @Persisted var age = 0
}

@Suite struct SectionedResultsTests {
    let folder = TemporaryFolder()

    func contacts() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Acquaintance.self]))
        try realm.write {
            for (name, group, age) in [("Ann", "b", 30), ("Bob", "a", 20), ("Cid", "b", 10), ("Dee", "c", 40)] {
                realm.add(Acquaintance(value: ["name": name, "group": group, "age": age]))
            }
        }
        return realm
    }

    @Test func sectionsByAKeyPathInSortOrder() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group, ascending: true)
        #expect(sections.allKeys == ["a", "b", "c"])
        #expect(sections.count == 3)
        #expect(sections[1].key == "b")
        #expect(sections[1].map(\.name).sorted() == ["Ann", "Cid"])
        #expect(sections[IndexPath(item: 0, section: 0)].name == "Bob")
        let descending = realm.objects(Acquaintance.self).sectioned(by: \.group, ascending: false)
        #expect(descending.allKeys == ["c", "b", "a"])
    }

    @Test func sectionsByABlockFollowTheFirstAppearanceOfEachKey() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "age")]) {
            $0.age >= 25 ? "older" : "younger"
        }
        #expect(sections.allKeys == ["younger", "older"])
        #expect(sections[0].map(\.name) == ["Cid", "Bob"])
        #expect(sections[1].map(\.name) == ["Ann", "Dee"])
    }

    @Test func sectionsAreLiveAndFreeze() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
        let frozen = sections.freeze()
        try realm.write { realm.add(Acquaintance(value: ["name": "Eve", "group": "d"])) }
        #expect(sections.allKeys == ["a", "b", "c", "d"])
        #expect(frozen.allKeys == ["a", "b", "c"])
        #expect(frozen.isFrozen)
    }

    @Test func observingReportsSectionAndRowChangesAcrossThreads() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
        let log = LockedBox<[String]>([])
        let token = sections.observe { change in
            switch change {
            case .initial(let sections): log.mutate { $0.append("initial \(sections.allKeys)") }
            case .update(_, let deletions, let insertions, let modifications, let sectionsToInsert, let sectionsToDelete):
                log.mutate { $0.append("d\(deletions.map { [$0.section, $0.item] }) i\(insertions.map { [$0.section, $0.item] }) "
                    + "m\(modifications.map { [$0.section, $0.item] }) +\(Array(sectionsToInsert)) -\(Array(sectionsToDelete))") }
            }  // Realm's two cases are the whole enum: this switch compiles as a Realm app's does.
        }
        realm.refresh()
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write {
                other.delete(other.objects(Acquaintance.self).filter("name == 'Dee'"))  // section c goes
                other.add(Acquaintance(value: ["name": "Zed", "group": "z"]))       // section z comes
                other.objects(Acquaintance.self).filter("name == 'Bob'").first?.age = 21
            }
        }
        realm.refresh()
        #expect(log.get() == ["initial [\"a\", \"b\", \"c\"]", "d[] i[[2, 0]] m[[0, 0]] +[2] -[2]"])
        token.invalidate()
    }

    @Test func aSectionIsIdentifiedByItsKeyAndFreezesAndThaws() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(by: \.group)
        let b = sections[1]
        #expect(b.id == "b")
        #expect(b == sections[1])
        #expect(b != sections[0])
        #expect(b.realm == realm)
        let frozen = b.freeze()
        try realm.write { realm.add(Acquaintance(value: ["name": "Eve", "group": "b"])) }
        #expect(b.count == 3)
        #expect(frozen.count == 2)
        #expect(frozen.isFrozen && !b.isFrozen && !b.isInvalidated)
        #expect(frozen.thaw()?.map(\.name).sorted() == ["Ann", "Cid", "Eve"])
    }

    @Test func observingSectionsWithTypedKeyPathsIgnoresOtherProperties() throws {
        let realm = try contacts()
        let updates = LockedBox(0)
        let token = realm.objects(Acquaintance.self).sectioned(by: \.group).observe(keyPaths: [\Acquaintance.name]) { change in
            if case .update = change { updates.mutate { $0 += 1 } }
        }
        realm.refresh()
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.objects(Acquaintance.self).filter("name == 'Bob'").first?.age = 99 }
        }
        realm.refresh()
        #expect(updates.get() == 0)
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.objects(Acquaintance.self).filter("name == 'Bob'").first?.name = "Rob" }
        }
        realm.refresh()
        #expect(updates.get() == 1)
        token.invalidate()
    }

    @Test func sectionsByAKeyPathFollowTheGivenSortDescriptors() throws {
        let realm = try contacts()
        let sections = realm.objects(Acquaintance.self).sectioned(
            by: \.group, sortDescriptors: [SortDescriptor(keyPath: "group", ascending: false), SortDescriptor(keyPath: "age")])
        #expect(sections.allKeys == ["c", "b", "a"])
        #expect(sections[1].map(\.name) == ["Cid", "Ann"])
    }

    static func contactsInChildProcess() -> Results<Acquaintance>? {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sections-\(UUID()).realm")
        return (try? Realm(configuration: .init(fileURL: url, objectTypes: [Acquaintance.self])))?.objects(Acquaintance.self)
    }

    @Test func sectioningByAKeyPathWithoutSortDescriptorsTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SectionedResultsTests.contactsInChildProcess()?.sectioned(by: \.group, sortDescriptors: [])
        }
        #expect(exitTestStandardError(result).contains("Can not section Results with empty sortDescriptor parameter."))
    }

    @Test func sectioningByAKeyPathSortedOnAnotherPropertyTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SectionedResultsTests.contactsInChildProcess()?.sectioned(by: \.group,
                                                                          sortDescriptors: [SortDescriptor(keyPath: "age")])
        }
        #expect(exitTestStandardError(result).contains("The section key path must match the primary sort descriptor."))
    }

    @Test func sectioningByABlockWithoutSortDescriptorsTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SectionedResultsTests.contactsInChildProcess()?.sectioned(sortDescriptors: []) { $0.group }
        }
        #expect(exitTestStandardError(result).contains("There must be at least one SortDescriptor when using SectionedResults."))
    }
}
