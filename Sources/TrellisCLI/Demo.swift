import ArgumentParser
import Foundation
import Trellis

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the seeds' Person/Dog models to demo.realm, reopen it and print what was read.",
        discussion: """
            Also writes app.realm (the seeds' Device Sync models, with primary keys) and other.realm (the \
            same schema, empty), which the README's schema, export and import commands use.
            """)

    @Option(help: "Folder for the databases (default: the current folder).")
    var dir: String?

    func run() throws {
        try reportingErrors(demonstrate)
    }

    private func demonstrate() throws {
        let folder = try CommandFiles.outputFolder(dir ?? FileManager.default.currentDirectoryPath, option: "--dir")
        let url = folder.appendingPathComponent("demo.realm")
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(atPath: url.path + "-lock")
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [Person.self, Dog.self, Address.self,
                                                                                  DogClub.self])

        try write(configuration)
        let thread = Thread { reopenAndPrint(configuration) }
        thread.start()
        while !thread.isFinished { usleep(1000) }
        printAppServicesSchema()
        try AppDemo.write(to: folder.appendingPathComponent("app.realm"), empty: folder.appendingPathComponent("other.realm"))
        print("Wrote app.realm (the seeds' Device Sync models) and other.realm (empty) beside it.")
    }

    /// The App Services schema of the demo's models (the seed's Device Sync mapping).
    private func printAppServicesSchema() {
        print("App Services schema of these models (links become the target's primary key):")
        do {
            let schema = try AppServicesSchema(objectTypes: [Person.self, Dog.self, Address.self, DogClub.self])
            for name in schema.collectionClassNames {
                do {
                    print("  \(name)/schema.json:")
                    let text = String(decoding: try schema.jsonSchema(for: name), as: UTF8.self)
                    print(text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
                } catch let error as Realm.Error {
                    print("    (not exportable: \(error.message))")
                }
            }
        } catch {
            print("  (not exportable: \(error))")
        }
    }

    private func write(_ configuration: Realm.Configuration) throws {
        let realm = try Realm(configuration: configuration)
        print("Writing to \(configuration.fileURL?.path ?? "?")")
        try realm.write {
            for (name, dogName, age, city) in [("Tim", "Rex", 3, "Oslo"), ("Ana", "Fido", 5, "Lisbon"),
                                               ("Ola", nil, 0, "Bergen")] as [(String, String?, Int, String)] {
                let person = Person()
                person.name = name
                if let dogName {
                    let dog = Dog()
                    dog.name = dogName
                    dog.age = age
                    person.dog = dog
                }
                let address = Address()
                address.city = city
                person.address = address
                let puppy = Dog()
                puppy.name = "\(name)'s puppy"
                person.dogs.append(puppy)
                if let dog = person.dog { person.dogs.append(dog) }
                realm.add(person)
            }
            let club = DogClub()
            club.name = "Sprinters"
            club.members.append(objectsIn: realm.objects(Person.self).filter { $0.dog != nil })
            let office = Address()
            office.city = "Trondheim"
            club.regionalOfficeAddresses.append(office)
            realm.add(club)
        }
        print("Wrote \(realm.objects(Person.self).count) Person, \(realm.objects(Dog.self).count) Dog and "
            + "\(realm.objects(DogClub.self).count) DogClub objects.")
    }
}

/// Opens the file again on a new thread (a new Realm instance) and prints every object.
func reopenAndPrint(_ configuration: Realm.Configuration) {
    do {
        let realm = try Realm(configuration: configuration)
        print("Reopened; read back:")
        for person in realm.objects(Person.self) {
            let dog = person.dog.map { "\($0.name), age \($0.age)" } ?? "no dog"
            print("  Person \(person.name) lives in \(person.address?.city ?? "?") and has \(dog); "
                + "dogs: \(person.dogs.map(\.name).joined(separator: ", ")); "
                + "clubs: \(person.clubs.map(\.name).joined(separator: ", "))")
        }
        for club in realm.objects(DogClub.self) {
            print("  DogClub \(club.name): members \(club.members.map(\.name).joined(separator: ", ")); "
                + "offices in \(club.regionalOfficeAddresses.compactMap(\.city).joined(separator: ", "))")
        }
        for dog in realm.objects(Dog.self) {
            print("  Dog \(dog.name) (_id \(dog._id))")
        }
        printQueries(realm)
    } catch {
        FileHandle.standardError.write(Data("trellis: error: \(error)\n".utf8))
    }
}

/// A few queries across the relationships, as text and as typed queries.
func printQueries(_ realm: Realm) {
    func names(_ people: Results<Person>) -> String { people.map(\.name).joined(separator: ", ") }
    let people = realm.objects(Person.self)
    print("Queries:")
    print("  dog.age > 2: \(names(people.filter("dog.age > 2")))")
    print("  ANY dogs.name ENDSWITH 'puppy' AND address.city BEGINSWITH[c] 'o': "
        + names(people.filter("ANY dogs.name ENDSWITH 'puppy' AND address.city BEGINSWITH[c] %@", "o")))
    print("  where { $0.clubs.name == \"Sprinters\" }: \(names(people.where { $0.clubs.name == "Sprinters" }))")
    print("  sorted by dog.age, descending: \(names(people.sorted(byKeyPath: "dog.age", ascending: false)))")
    let clubs = realm.objects(DogClub.self).filter("members.@count > 1 AND ANY regionalOfficeAddresses.city == %@",
                                                   "Trondheim")
    print("  clubs with more than one member and an office in Trondheim: "
        + clubs.map(\.name).joined(separator: ", "))
}
