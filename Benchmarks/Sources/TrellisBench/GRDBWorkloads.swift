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

    // Issue 19's W5 rows over the scan's Dogs, each in GRDB's fastest SQL (no index on age or
    // name, as on Trellis's side).

    /// One integer from `sql`, read on a reader connection.
    private func integer(_ sql: String, in pool: DatabasePool) throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: sql) } ?? -1
    }

    func w5Sum(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) { sums.record("W5 sum", try integer("SELECT SUM(age) FROM dog", in: pool)) }
    }

    func w5Average(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let average = try pool.read { try Double.fetchOne($0, sql: "SELECT AVG(age) FROM dog") }
            sums.record("W5 average", microunits(average))
        }
    }

    /// Both in one query: one scan, where two queries make two (there is no index on age); at
    /// 100k Dogs 4.8 ms against 6.4 ms.
    func w5MinMax(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let (min, max) = try pool.read { db -> (Int, Int) in
                let row = try GRDB.Row.fetchOne(db, sql: "SELECT MIN(age), MAX(age) FROM dog")
                return (row?[0] ?? -1, row?[1] ?? -1)
            }
            sums.record("W5 min", min)
            sums.record("W5 max", max)
        }
    }

    /// Realm's `BEGINSWITH` is case-sensitive, as a range on the name is; `LIKE 'dog 1%'` is not,
    /// and `GLOB 'dog 1*'` is exact too but was no faster (3.3-3.6 ms for both and for `LIKE`
    /// at 100k Dogs, the range the lowest by a hair).
    func w5Prefix(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            sums.record("W5 prefix", try integer(
                "SELECT COUNT(*) FROM dog WHERE age > 40 AND name >= 'dog 1' AND name < 'dog 2'", in: pool))
        }
    }

    /// The age column only: Trellis's side reads nothing else.
    func w5SortedAges(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let ages = try pool.read { try Int.fetchAll($0, sql: "SELECT age FROM dog ORDER BY age LIMIT 100") }
            sums.record("W5 sorted", ages.reduce(0, sequenceChecksum))
        }
    }

    /// Whole records, as `SELECT * FROM dog ORDER BY age LIMIT 100`.
    func w5SortedRecords(_ pool: DatabasePool) throws -> Double {
        try median(sizes.repetitions) {
            let dogs = try pool.read { try DogRecord.order(Column("age")).limit(100).fetchAll($0) }
            sums.record("W5 sorted", dogs.reduce(0) { sequenceChecksum($0, $1.age) })
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
