import Foundation
import Logging
import PostgresNIO

extension PostgresFixture {
    /// A connection (PostgresNIO, no TLS) to the database at `url` (postgres://…), for tests that
    /// run the server's SQL themselves.
    static func connect(_ url: String, logger: Logger) async throws -> PostgresConnection {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
            throw ToolError(description: "bad PostgreSQL URL \(url)")
        }
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: components.user ?? "postgres", password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    }

    /// A connection to a new empty database (``makeDatabase()``).
    static func connectToNewDatabase(logger: Logger) async throws -> PostgresConnection {
        try await connect(try makeDatabase(), logger: logger)
    }
}
