import Foundation
import Trellis
import TrellisTestSupport

/// The writer and the checker of the crash test (Tests/TrellisTests/CrashTests.swift).
///
/// The writer runs random write transactions until it is killed and prints one line per
/// committed transaction *after* `write` returns, so every printed transaction is durable.
/// The checker reopens the file and prints what it finds as JSON.
enum CrashWorkload {
    /// The checker opens with the structure check (it must pass on every file a kill leaves);
    /// the writer skips it, so that its short lives are spent committing, not reading the file.
    static func open(_ path: String, verifying: Bool = true) throws -> Realm {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: crashModelTypes)
        configuration.verifiesFileOnOpen = verifying
        return try Realm(configuration: TestEncryptionKey.applied(to: configuration))
    }

    /// Writes transactions forever (until killed): `ready` once the file is open, then
    /// `committed <t>` or `committed <t> deleted <g>` per transaction.
    static func write(path: String, seed: UInt64) throws {
        let realm = try open(path, verifying: false)
        var random = SplitMix64(seed: seed)
        var transaction = (realm.object(ofType: CrashLedger.self, forPrimaryKey: 0)?.lastTransaction ?? 0) + 1
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while true {
            var deleted: Int?
            try realm.write {
                deleted = randomTransaction(transaction, in: realm, random: &random)
            }
            let line = "committed \(transaction)" + (deleted.map { " deleted \($0)" } ?? "") + "\n"
            FileHandle.standardOutput.write(Data(line.utf8))
            transaction += 1
        }
    }

    /// One transaction: a new group, then changes to or the deletion of an earlier one.
    private static func randomTransaction(_ transaction: Int, in realm: Realm, random: inout SplitMix64) -> Int? {
        // Now and then a large transaction, so that kills also land inside long commits.
        let people = random.next(upTo: 20) == 0 ? 300 : 1 + random.next(upTo: 4)
        addGroup(transaction, people: people, in: realm, random: &random)
        let earlier = realm.objects(CrashMarker.self).where { $0.group != transaction }
        var deleted: Int?
        if !earlier.isEmpty {
            let other = earlier[random.next(upTo: earlier.count)]
            realm.add(CrashTouch(value: ["transaction": transaction, "group": other.group]))
            if random.next(upTo: 3) == 0 {
                deleted = other.group
                deleteGroup(other, by: transaction, in: realm)
            } else {
                changeGroup(other, in: realm, random: &random)
            }
        }
        let ledger = realm.object(ofType: CrashLedger.self, forPrimaryKey: 0) ?? realm.create(CrashLedger.self)
        ledger.lastTransaction = transaction
        return deleted
    }

    private static func addGroup(_ group: Int, people: Int, in realm: Realm, random: inout SplitMix64) {
        let marker = CrashMarker()
        marker.group = group
        marker.people = people
        for index in 0..<people {
            let person = CrashPerson()
            person.group = group
            person.name = "person \(group).\(index)"
            person.address = CrashAddress(value: ["street": "\(index) Crash Street"])
            let dog = CrashDog(value: ["group": group, "age": index])
            person.dog = dog
            person.dogs.append(dog)
            for _ in 0..<random.next(upTo: 4) {
                person.dogs.append(CrashDog(value: ["group": group, "age": random.next(upTo: 15)]))
            }
            marker.dogs += person.dogs.count
            realm.add(person)
        }
        realm.add(marker)
    }

    /// Re-links, replaces embedded objects, removes list entries and deletes one dog.
    private static func changeGroup(_ marker: CrashMarker, in realm: Realm, random: inout SplitMix64) {
        let people = realm.objects(CrashPerson.self).where { $0.group == marker.group }
        let dogs = realm.objects(CrashDog.self).where { $0.group == marker.group }
        guard !people.isEmpty, !dogs.isEmpty else { return }
        let person = people[random.next(upTo: people.count)]
        person.address = CrashAddress(value: ["street": "moved \(random.next(upTo: 1000))"])
        person.dog = dogs[random.next(upTo: dogs.count)]
        if !person.dogs.isEmpty { person.dogs.remove(at: random.next(upTo: person.dogs.count)) }
        person.dogs.append(dogs[random.next(upTo: dogs.count)])
        if dogs.count > 1 {
            realm.delete(dogs[random.next(upTo: dogs.count)])
            marker.dogs -= 1
        }
    }

    private static func deleteGroup(_ marker: CrashMarker, by transaction: Int, in realm: Realm) {
        let group = marker.group
        realm.delete(realm.objects(CrashPerson.self).where { $0.group == group })
        realm.delete(realm.objects(CrashDog.self).where { $0.group == group })
        realm.delete(marker)
        realm.add(CrashDeletion(value: ["group": group, "byTransaction": transaction]))
    }

    /// Prints `{"last": …, "groups": […], "deletions": {group: transaction}, "problems": […]}`.
    ///
    /// Without `since`, a full check: the whole file's structure on open (every page's checksum),
    /// the consistency checker (links = backlinks, embedded parents, indexes) and every group.
    /// With `since` (the ledger's last transaction at the previous check), only what the
    /// transactions after it can have written: groups newer than `since`, the groups they changed
    /// or deleted (`CrashTouch`, written in the same transaction), objects of newer groups without
    /// a marker, and the ledger; the markers and deletions lists are always whole. Pages read are
    /// still checked against their checksums. Each check costs what the round wrote, not the file.
    static func check(path: String, since: Int? = nil) throws {
        let realm = try open(path, verifying: since == nil)
        var problems = since == nil ? realm._consistencyProblems() : []
        let last = realm.object(ofType: CrashLedger.self, forPrimaryKey: 0)?.lastTransaction ?? 0
        let groups = realm.objects(CrashMarker.self).map(\.group)
        let live = Set(groups)
        var deletions = [String: Int]()
        var groupsToCheck = live.filter { $0 > since ?? Int.min }
        for deletion in realm.objects(CrashDeletion.self) {
            deletions[String(deletion.group)] = deletion.byTransaction
            if live.contains(deletion.group) { problems.append("group \(deletion.group) is both deleted and present") }
            if let since, deletion.byTransaction > since { groupsToCheck.insert(deletion.group) }
        }
        if let since {
            groupsToCheck.formUnion(realm.objects(CrashTouch.self).where { $0.transaction > since }.map(\.group))
        }
        for group in groupsToCheck.sorted() {
            let people = realm.objects(CrashPerson.self).where { $0.group == group }
            let dogs = realm.objects(CrashDog.self).where { $0.group == group }
            guard let marker = realm.object(ofType: CrashMarker.self, forPrimaryKey: group) else {
                if !people.isEmpty || !dogs.isEmpty { problems.append("objects of groups without a marker: [\(group)]") }
                continue
            }
            if people.count != marker.people { problems.append("group \(group): \(people.count) people, marker says \(marker.people)") }
            if dogs.count != marker.dogs { problems.append("group \(group): \(dogs.count) dogs, marker says \(marker.dogs)") }
            if group > last { problems.append("group \(group) is newer than the ledger's \(last)") }
            for person in people {
                if person.address == nil { problems.append("\(person.name) has no address") }
                if let dog = person.dog, dog.group != group { problems.append("\(person.name) links a dog of another group") }
                if person.dogs.contains(where: { $0.group != group }) { problems.append("\(person.name) lists a dog of another group") }
            }
        }
        // Objects whose group has no marker: a partial transaction (of any group, or of a newer one).
        let people = since.map { since in realm.objects(CrashPerson.self).where { $0.group > since } } ?? realm.objects(CrashPerson.self)
        let dogs = since.map { since in realm.objects(CrashDog.self).where { $0.group > since } } ?? realm.objects(CrashDog.self)
        let strays = Set(people.map(\.group)).union(dogs.map(\.group)).subtracting(live)
        if !strays.isEmpty { problems.append("objects of groups without a marker: \(strays.sorted())") }
        let report: [String: Any] = ["last": last, "groups": groups.sorted(), "deletions": deletions, "problems": problems]
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
