import Logging
import PostgresNIO
import Testing
@testable import TrellisSyncServer

/// How the server connects to PostgreSQL: its connections run with `jit = off`, and a
/// `--postgres` value that is not a URL is echoed without its password.
@Suite struct PostgresClientSettingsTests {
    @Test func theServersConnectionsRunWithJITOff() async throws {
        let url = try PostgresURL(try PostgresFixture.makeDatabase())
        let client = PostgresClient(configuration: try url.clientConfiguration(),
                                    backgroundLogger: Logger(label: "client-settings"))
        let setting = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { await client.run(); return nil }
            group.addTask {
                var value = ""
                for try await text in try await client.query("SHOW jit").decode(String.self) { value = text }
                return value
            }
            var found: String?
            while let next = try await group.next() {
                if let next { found = next; group.cancelAll() }
            }
            return found
        }
        #expect(setting == "off")
    }

    @Test func aURLThatDoesNotParseIsEchoedWithoutItsPassword() {
        for (text, shown) in [("postgres://me:s3cret@/app", "postgres://me:***@/app"),
                              ("postgres://me:p@ss@/app", "postgres://me:***@/app"),
                              ("postgresql://me:s3cret@", "postgresql://me:***@")] {
            do {
                _ = try PostgresURL(text)
                Issue.record("'\(text)' was read as a URL")
            } catch {
                #expect(!"\(error)".contains("s3cret") && !"\(error)".contains("ss@"), "\(error)")
                #expect("\(error)".contains("'\(shown)' is not a PostgreSQL URL"), "\(error)")
            }
        }
        // Nothing to hide: the text is shown as given.
        #expect(PostgresURL.redacting("localhost:5432/app") == "localhost:5432/app")
        #expect(PostgresURL.redacting("postgres://me@/app") == "postgres://me@/app")
    }
}
