import PostgresNIO

/// The PostgreSQL versions the server's SQL runs on (docs/SYNC.md, "Tables").
extension PostgresStore {
    /// The oldest supported PostgreSQL, as `server_version_num` counts it: 13 brought
    /// `trim_scale`, which the history's object index uses (`PostgresStore+HistoryObjectIndex.swift`).
    static let oldestSupportedVersion = 130_000

    /// Refuses a PostgreSQL older than ``oldestSupportedVersion`` with a message naming the
    /// version found, instead of the first statement's "function does not exist".
    static func checkSupported(versionNumber: Int, versionText: String) throws {
        guard versionNumber < oldestSupportedVersion else { return }
        throw OptionError("The database runs PostgreSQL \(versionText); Trellis Sync needs PostgreSQL 13 or later. "
            + "Upgrade that server, or point --postgres at a newer one.")
    }

    /// Reads the server's version on `connection` and refuses an unsupported one.
    func checkSupportedVersion(on connection: PostgresConnection) async throws {
        let rows = try await connection.query("""
            SELECT current_setting('server_version_num')::int, current_setting('server_version')
            """, logger: logger).collect()
        guard let row = rows.first else { return }
        let (number, text) = try row.decode((Int, String).self)
        try Self.checkSupported(versionNumber: number, versionText: text)
    }
}
