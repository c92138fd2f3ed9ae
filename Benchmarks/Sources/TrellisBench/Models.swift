import Foundation
import GRDB
import Trellis

// MARK: - Trellis models (the seeds' Person/Dog, with integer primary keys for lookups)

final class BenchDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var listOwners: LinkingObjects<BenchPerson>
}

final class BenchPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var dog: BenchDog?
    @Persisted var dogs: List<BenchDog>
}

/// An owner of a set and a map (the `C` instruction workloads only; not in W1-W8's files).
final class BenchTagged: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var tags: MutableSet<Int>
    @Persisted var scores: Map<String, Int>
}

// MARK: - GRDB records (what a GRDB user would write: foreign keys, an ordered join table
// for the list, indexes on the foreign keys)

struct DogRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "dog"
    var id: Int64
    var name: String
    var age: Int
}

struct PersonRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var dogId: Int64?

    static let dog = belongsTo(DogRecord.self)
    static let memberships = hasMany(MembershipRecord.self)
    static let dogs = hasMany(DogRecord.self, through: memberships.order(Column("position")), using: MembershipRecord.dog)

    var dog: QueryInterfaceRequest<DogRecord> { request(for: PersonRecord.dog) }
    var dogs: QueryInterfaceRequest<DogRecord> { request(for: PersonRecord.dogs) }
}

/// One element of a person's list of dogs: the join table, ordered by position.
struct MembershipRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "personDog"
    var personId: Int64
    var dogId: Int64
    var position: Int

    static let dog = belongsTo(DogRecord.self)
    static let person = belongsTo(PersonRecord.self)
}

/// A person with its dog, for `including(required:)`.
struct PersonWithDog: Decodable, FetchableRecord {
    var person: PersonRecord
    var dog: DogRecord
}

/// A person with its dogs, for `including(all:)`.
struct PersonWithDogs: Decodable, FetchableRecord {
    var person: PersonRecord
    var dogs: [DogRecord]
}

enum GRDBSchema {
    static func create(_ db: Database) throws {
        try db.create(table: "dog") { t in
            t.primaryKey("id", .integer)
            t.column("name", .text).notNull()
            t.column("age", .integer).notNull()
        }
        try db.create(table: "person") { t in
            t.primaryKey("id", .integer)
            t.column("name", .text).notNull()
            t.belongsTo("dog")  // dogId, indexed, foreign key
        }
        try db.create(table: "personDog") { t in
            t.belongsTo("person", onDelete: .cascade).notNull()
            t.belongsTo("dog", onDelete: .cascade).notNull()
            t.column("position", .integer).notNull()
        }
        try db.create(index: "personDog_order", on: "personDog", columns: ["personId", "position"])
    }
}
