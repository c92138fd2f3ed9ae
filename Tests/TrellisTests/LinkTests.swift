import Foundation
import Testing
@testable import Trellis

/// To-one links and embedded objects, as the core supports them (issue 3 extends this).
@Suite struct LinkTests {
    let folder = TemporaryFolder()

    @Test func addingAPersonAddsTheLinkedDog() throws {
        let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
        let person = Person()
        person.dog = Dog(value: ["name": "Harvie"])
        try realm.write { realm.add(person) }
        #expect(realm.objects(Dog.self).count == 1)
        #expect(person.dog?.name == "Harvie")
        #expect(person.dog?.realm != nil)
    }

    @Test func settingALinkToNilDoesNotDeleteTheTarget() throws {
        let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
        let person = Person()
        person.dog = Dog()
        try realm.write { realm.add(person) }
        try realm.write { person.dog = nil }
        #expect(person.dog == nil)
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test func deletingTheTargetNullsTheLink() throws {
        let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
        let person = Person()
        person.dog = Dog()
        try realm.write { realm.add(person) }
        try realm.write { realm.delete(try #require(person.dog)) }
        #expect(person.dog == nil)
        #expect(realm.objects(Person.self).first?.dog == nil)
    }

    @Test func assigningAnUnmanagedObjectToAManagedLinkAddsIt() throws {
        let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
        let person = Person()
        try realm.write { realm.add(person) }
        try realm.write { person.dog = Dog(value: ["name": "New"]) }
        #expect(realm.objects(Dog.self).count == 1)
        #expect(person.dog?.name == "New")
    }

    @Test func selfLinksAndCyclesAreStoredOnce() throws {
        let realm = try Realm(configuration: folder.configuration([Linked.self]))
        let a = Linked(value: ["name": "a"]), b = Linked(value: ["name": "b"])
        a.next = b
        b.next = a
        let selfLinked = Linked(value: ["name": "self"])
        selfLinked.next = selfLinked
        try realm.write { realm.add(a); realm.add(selfLinked) }
        #expect(realm.objects(Linked.self).count == 3)
        #expect(a.next?.next?.name == "a")
        #expect(selfLinked.next?.isSameObject(as: selfLinked) == true)
    }

    @Test func backlinkIndexFollowsLinkChanges() throws {
        let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
        let dog = Dog()
        let p1 = Person(), p2 = Person()
        p1.dog = dog
        p2.dog = dog
        try realm.write { realm.add([p1, p2]) }
        let core = realm.core
        let dogManaged = try #require(dog._managed)
        #expect(core.backlinks(to: dogManaged.table, key: dogManaged.key).count == 2)
        try realm.write { p1.dog = nil }
        #expect(core.backlinks(to: dogManaged.table, key: dogManaged.key).count == 1)
        try realm.write { realm.delete(p2) }
        #expect(core.backlinks(to: dogManaged.table, key: dogManaged.key).isEmpty)
    }

    @Test func overwritingAnEmbeddedObjectDeletesTheOldOne() throws {
        let realm = try Realm(configuration: folder.configuration([Contact.self, Address.self]))
        let contact = Contact()
        contact.address = Address(value: ["street": "Old"])
        try realm.write { realm.add(contact) }
        let old = try #require(contact.address)
        try realm.write { contact.address = Address(value: ["street": "New"]) }
        #expect(old.isInvalidated)
        #expect(contact.address?.street == "New")
        try realm.write { contact.address = nil }
        #expect(contact.address == nil)
    }

    @Test func deletingTheParentDeletesEmbeddedChildren() throws {
        let realm = try Realm(configuration: folder.configuration([Contact.self, Address.self]))
        let contact = Contact()
        contact.address = Address(value: ["city": "Oslo"])
        try realm.write { realm.add(contact) }
        let address = try #require(contact.address)
        try realm.write { realm.delete(contact) }
        #expect(address.isInvalidated)
        let table = try #require(realm.core.table(for: Address.self, create: false))
        #expect(realm.core.transaction.entryCount(table.rows) == 0)
    }

    @Test func seedModelsWriteReopenAndReadBack() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            try realm.write {
                let person = Person()
                person.name = "Tim"
                person.birthdate = Date(timeIntervalSince1970: 1)
                let dog = Dog()
                dog.name = "Rex"
                dog.age = 2
                dog.breed = "Beagle"
                person.dog = dog
                realm.add(person)
            }
        }
        let read = try onOtherThread { () -> String in
            let realm = try Realm(configuration: folder.configuration([Person.self, Dog.self]))
            let person = try #require(realm.objects(Person.self).first)
            return "\(person.name) \(person.birthdate.timeIntervalSince1970) \(person.dog?.name ?? "") \(person.dog?.breed ?? "")"
        }
        #expect(read == "Tim 1.0 Rex Beagle")
    }
}
