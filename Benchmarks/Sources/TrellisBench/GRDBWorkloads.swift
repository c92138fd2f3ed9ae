import Foundation
import GRDB

/// W1-W7 on GRDB with its default `DatabasePool` (WAL), records and associations.
struct GRDBWorkloads {
    let sizes: Sizes
    let scratch: Scratch
    let sums: Checksums

    func open(_ url: URL, synchronous: String? = nil) throws -> DatabasePool {
        let pool = try DatabasePool(path: url.path)
        if let synchronous {
            // Not in `prepareDatabase`: opening a pool sets WAL mode and `synchronous = NORMAL`
            // after it. The writer connection is the one that commits.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
                let expected = ["OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3][synchronous]
                guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == expected else {
                    throw DatabaseError(message: "PRAGMA synchronous = \(synchronous) did not take")
                }
            }
        }
        try pool.write { try GRDBSchema.create($0) }
        return pool
    }

    func insertPeopleWithDogs(_ pool: DatabasePool) throws {
        try pool.write { db in
            for i in 0..<sizes.objects {
                try DogRecord(id: Int64(i), name: "dog \(i)", age: i % 80).insert(db)
                try PersonRecord(id: Int64(i), name: "person \(i)", dogId: Int64(i)).insert(db)
            }
        }
    }

    func insertListOwners(_ pool: DatabasePool) throws {
        try pool.write { db in
            for i in 0..<sizes.listOwners {
                try PersonRecord(id: Int64(i), name: "owner \(i)", dogId: nil).insert(db)
                for j in 0..<sizes.listLength {
                    let dogId = Int64(i * sizes.listLength + j)
                    try DogRecord(id: dogId, name: "dog \(j)", age: j).insert(db)
                    try MembershipRecord(personId: Int64(i), dogId: dogId, position: j).insert(db)
                }
            }
        }
    }

    func w1Insert() throws -> Double {
        var pool: DatabasePool?
        return try median(sizes.repetitions, setup: { pool = try open(scratch.file("w1.sqlite")) }) {
            try insertPeopleWithDogs(pool!)
        }
    }

    func w1File() throws -> DatabasePool {
        let pool = try open(scratch.file("read.sqlite"))
        try insertPeopleWithDogs(pool)
        return pool
    }

    /// Per-row association fetch: each person's dog with its own request.
    func w2PerRow(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                var sum = 0
                for person in try PersonRecord.fetchAll(db) { sum &+= try person.dog.fetchOne(db)?.age ?? 0 }
                return sum
            }
            sums.record("W2", sum)
        }
    }

    /// Eager loading: one query joining each person to its dog.
    func w2Eager(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                try PersonRecord.including(required: PersonRecord.dog).asRequest(of: PersonWithDog.self)
                    .fetchAll(db).reduce(0) { $0 &+ $1.dog.age }
            }
            sums.record("W2", sum)
        }
    }

    func w3Build() throws -> Double {
        var pool: DatabasePool?
        return try median(sizes.repetitions, setup: { pool = try open(scratch.file("w3.sqlite")) }) {
            try insertListOwners(pool!)
        }
    }

    func w3File() throws -> DatabasePool {
        let pool = try open(scratch.file("lists.sqlite"))
        try insertListOwners(pool)
        return pool
    }

    func w3PerRow(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                var sum = 0
                for person in try PersonRecord.fetchAll(db) {
                    for dog in try person.dogs.fetchAll(db) { sum &+= dog.age }
                }
                return sum
            }
            sums.record("W3", sum)
        }
    }

    func w3Eager(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                try PersonRecord.including(all: PersonRecord.dogs).asRequest(of: PersonWithDogs.self).fetchAll(db)
                    .reduce(0) { total, person in person.dogs.reduce(total) { $0 &+ $1.age } }
            }
            sums.record("W3", sum)
        }
    }

    /// Per dog, a COUNT over the join table (indexed on dogId).
    func w4PerRow(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                var sum = 0
                for dog in try DogRecord.fetchAll(db) {
                    sum &+= try MembershipRecord.filter(Column("dogId") == dog.id).fetchCount(db)
                }
                return sum
            }
            sums.record("W4", sum)
        }
    }

    /// One grouped query for every dog's count.
    func w4Grouped(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                try Int.fetchAll(db, sql: """
                    SELECT COUNT(personDog.dogId) FROM dog LEFT JOIN personDog ON personDog.dogId = dog.id GROUP BY dog.id
                    """).reduce(0, &+)
            }
            sums.record("W4", sum)
        }
    }

    func w5Scan(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            sums.record("W5 scan", try pool.read { try DogRecord.filter(Column("age") > 40).fetchCount($0) })
        }
    }

    func w5Link(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            sums.record("W5 link", try pool.read { db in
                try PersonRecord.joining(required: PersonRecord.dog.filter(Column("age") > 10)).fetchCount(db)
            })
        }
    }

    func w5Lookup(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                var sum = 0
                var key = 7
                for _ in 0..<sizes.lookups {
                    key = (key &* 31 &+ 17) % sizes.objects
                    sum &+= try DogRecord.fetchOne(db, key: key)?.age ?? 0
                }
                return sum
            }
            sums.record("W5 lookup", sum)
        }
    }

    func w6Commits(synchronous: String) throws -> Double {
        var pool: DatabasePool?
        return try median(sizes.repetitions, setup: {
            pool = try open(scratch.file("w6.sqlite"), synchronous: synchronous)
        }) {
            for i in 0..<sizes.commits {
                try pool!.write { db in try DogRecord(id: Int64(i), name: "dog \(i)", age: 0).insert(db) }
            }
        }
    }

    func w7FetchAll(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                try DogRecord.fetchAll(db).reduce(0) { $0 &+ $1.age &+ $1.name.utf8.count }
            }
            sums.record("W7", sum)
        }
    }

    func w7Cursor(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let sum = try pool.read { db in
                var sum = 0
                let cursor = try DogRecord.fetchCursor(db)
                while let dog = try cursor.next() { sum &+= dog.age &+ dog.name.utf8.count }
                return sum
            }
            sums.record("W7", sum)
        }
    }
}
