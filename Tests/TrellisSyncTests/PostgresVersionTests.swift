import Testing
@testable import TrellisSyncServer

/// The server refuses a PostgreSQL older than 13 with a message naming the version it found
/// (the history's object index uses `trim_scale`, new in 13), instead of failing at its first
/// statement with "function does not exist".
@Suite struct PostgresVersionTests {
    @Test func postgreSQL12IsRefusedNamingTheVersionFoundAndTheOneNeeded() {
        do {
            try PostgresStore.checkSupported(versionNumber: 120_015, versionText: "12.15")
            Issue.record("PostgreSQL 12 was accepted")
        } catch let error as OptionError {
            #expect(error.description.contains("PostgreSQL 12.15"))
            #expect(error.description.contains("PostgreSQL 13 or later"))
            #expect(error.description.contains("--postgres"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func postgreSQL13AndLaterAreAccepted() throws {
        try PostgresStore.checkSupported(versionNumber: 130_000, versionText: "13.0")
        try PostgresStore.checkSupported(versionNumber: 150_018, versionText: "15.18 (Debian 15.18-0+deb12u1)")
        try PostgresStore.checkSupported(versionNumber: 170_002, versionText: "17.2")
    }
}
