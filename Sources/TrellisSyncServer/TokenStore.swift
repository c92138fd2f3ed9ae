import Foundation
import Logging
import PostgresNIO
import TrellisSyncProtocol

/// The server's auth state in PostgreSQL, shared by every server process on the database:
/// its signing key (`trellis_server_keys`, made once from random bytes) and the refresh
/// tokens it issued (`trellis_refresh_tokens`: revocable, with their expiry).
struct TokenStore: Sendable {
    let client: PostgresClient
    let logger: Logging.Logger

    /// Creates the tables if missing.
    func prepare() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresStore.setupLock))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_server_keys (name text PRIMARY KEY, secret text NOT NULL,
                  created_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_refresh_tokens (token_id uuid PRIMARY KEY, user_id text NOT NULL,
                  provider text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
                  expires_at timestamptz NOT NULL, revoked_at timestamptz)
                """, logger: logger)
            // Each user's data (`%%user.data` in rules): the Custom JWT metadata of their last login.
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS trellis_users (user_id text PRIMARY KEY, data jsonb NOT NULL,
                  updated_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            // Expired tokens mint nothing: forget them when a server starts (a day late, so a
            // token expiring during a clock step is still told apart from an unknown one).
            try await connection.query("""
                DELETE FROM trellis_refresh_tokens WHERE expires_at < now() - interval '1 day'
                """, logger: logger)
        }
    }

    /// The signing key of access and refresh tokens: the one in the database, or a new random
    /// one stored there (the first server to start makes it; the others read it).
    func signingKey() async throws -> String {
        var bytes = [UInt8](repeating: 0, count: 48)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let fresh = Data(bytes).base64EncodedString()
        try await client.query("""
            INSERT INTO trellis_server_keys (name, secret) VALUES ('token-signing', \(fresh)) ON CONFLICT (name) DO NOTHING
            """, logger: logger)
        for try await (secret) in try await client.query(
            "SELECT secret FROM trellis_server_keys WHERE name = 'token-signing'", logger: logger).decode(String.self)
        {
            return secret
        }
        throw OptionError("The signing key could not be read back from the table trellis_server_keys.")
    }

    /// Records a new refresh token.
    func add(tokenId: UUID, userId: String, provider: String, expires: Date) async throws {
        try await client.query("""
            INSERT INTO trellis_refresh_tokens (token_id, user_id, provider, expires_at)
            VALUES (\(tokenId), \(userId), \(provider), \(expires))
            """, logger: logger)
    }

    /// Whether a refresh token is known, unrevoked, unexpired and belongs to `userId`.
    func isValid(tokenId: UUID, userId: String) async throws -> Bool {
        let rows = try await client.query("""
            SELECT count(*)::bigint FROM trellis_refresh_tokens WHERE token_id = \(tokenId) AND user_id = \(userId)
              AND revoked_at IS NULL AND expires_at > now()
            """, logger: logger)
        for try await (count) in rows.decode(Int64.self) { return count == 1 }
        return false
    }

    /// Stores a user's data (the Custom JWT metadata of their latest login).
    func setUserData(userId: String, data: [String: JSONValue]) async throws {
        let text = JSONValue.object(data).jsonText
        try await client.query("""
            INSERT INTO trellis_users (user_id, data) VALUES (\(userId), \(text)::jsonb)
            ON CONFLICT (user_id) DO UPDATE SET data = EXCLUDED.data, updated_at = now()
            """, logger: logger)
    }

    /// Revokes one refresh token (logout); access tokens made with it end at their expiry.
    func revoke(tokenId: UUID) async throws {
        try await client.query("""
            UPDATE trellis_refresh_tokens SET revoked_at = now() WHERE token_id = \(tokenId) AND revoked_at IS NULL
            """, logger: logger)
    }
}
