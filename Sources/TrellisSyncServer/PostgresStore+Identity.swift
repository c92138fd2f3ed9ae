import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// The identity of the database's sync history (`trellis_server_identity`, one row), which
/// tells a client whether the history it synced with still exists:
///
/// - `epoch`: random, made by the first server of the database. A database dropped and
///   recreated (or a different database) has another epoch, so a client that synced with the
///   old one is reset (error 207) instead of keeping objects the server no longer has.
/// - `history_floor`: the newest history version that may have been pruned (0: all kept).
///   Whatever prunes `trellis_history` (entries up to version P) first raises it to P; a
///   client whose last applied version is below it can no longer catch up and is reset
///   (error 222).
struct ServerIdentity: Sendable, Equatable {
    var epoch: String
    var historyFloor: Int64
}

extension PostgresStore {
    /// Creates the identity row when missing (inside `prepare`'s transaction).
    func prepareIdentity(on connection: PostgresConnection) async throws {
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS trellis_server_identity (id int PRIMARY KEY CHECK (id = 1), epoch text NOT NULL,
              history_floor bigint NOT NULL DEFAULT 0, created_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        let epoch = UUID().uuidString.lowercased()
        try await connection.query("""
            INSERT INTO trellis_server_identity (id, epoch) VALUES (1, \(epoch)) ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    /// The database's history identity (read at each session start: pruning may raise the
    /// floor while servers run).
    func identity() async throws -> ServerIdentity {
        let rows = try await client.query("SELECT epoch, history_floor FROM trellis_server_identity WHERE id = 1",
                                          logger: logger)
        for try await (epoch, floor) in rows.decode((String, Int64).self) {
            return ServerIdentity(epoch: epoch, historyFloor: floor)
        }
        throw PostgresStoreError(message: "trellis_server_identity has no row: was the table emptied by hand? Restart "
            + "a server to make a new identity (every client then resets).")
    }
}

/// A state of the database the server cannot work with.
struct PostgresStoreError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
