import Foundation
import GRDB

/// SQLite through GRDB: a `DatabasePool` (WAL) with `synchronous = FULL`, so each commit syncs
/// the WAL once. The table holds the same keys and values as the engines' tree.
final class GRDBPeer {
    let pool: DatabasePool

    init(path: String) throws {
        pool = try DatabasePool(path: path)
        // Not in `prepareDatabase`: opening a pool sets WAL mode and `synchronous = NORMAL`
        // after it. The writer connection is the one that commits.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2,
                  try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal"
            else { throw DatabaseError(message: "GRDB peer: WAL with synchronous = FULL did not take") }
            try db.execute(sql: "CREATE TABLE bench (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID")
        }
    }

    /// One write transaction per key, each committed durably.
    func commitEach(_ keys: [[UInt8]], value: [UInt8]) throws {
        let valueData = Data(value)
        for key in keys {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO bench (key, value) VALUES (?, ?)")
                try statement.execute(arguments: [Data(key), valueData])
            }
        }
    }

    func close() throws { try pool.close() }
}
