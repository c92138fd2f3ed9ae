import Foundation
import Logging
import PostgresNIO
import Testing
import TrellisSyncProtocol
@testable import TrellisSyncServer
import TrellisTestSupport

/// A bootstrap reads a collection a page at a time, each page after the last `_id` of the one
/// before (keyset pagination). The pages used to be ordered by the `_id` column cast to text
/// (`ORDER BY _id` names the output column `_id::text`) and continued by `_id > last` in the
/// column's own type: a collection of integer keys larger than a page lost rows and sent
/// others twice (found by ForwardLinkTests, session 28: 19 of 1,200 objects never arrived).
@Suite(.serialized)
struct BootstrapPagingTests {
    static let logger = Logger(label: "bootstrap-paging-tests")

    /// The `_id`s of a table, read as a bootstrap reads them in pages of `limit`.
    static func pagedIds(_ connection: PostgresConnection, table: String, idType: String, limit: Int) async throws
        -> [String]
    {
        var ids = [String]()
        var after: String?
        repeat {
            let query = SubscriptionFilter.selectDocuments(from: table, idType: idType, filter: nil, after: after,
                                                           limit: limit)
            var count = 0
            after = nil
            for try await (id, _, _) in try await connection.query(query, logger: logger).decode((String, String, String?).self) {
                ids.append(id)
                after = id
                count += 1
            }
            if count < limit { after = nil }
        } while after != nil
        return ids
    }

    /// Integer keys 1…1,200 (text order differs from number order from 10 on), UUIDs and
    /// strings (fixed seed), in pages of 100: every row once, in the key type's order.
    @Test func aBootstrapReadsEveryRowOnceWhateverItsKeyType() async throws {
        var random = SplitMix64(seed: 0xB007_0028)
        let numbers = (1...1_200).map { Int64($0) }.shuffled(using: &random)
        let uuids = (0..<450).map { _ in UUID(uuid: Self.bytes(&random)).uuidString.lowercased() }
        let strings = (0..<450).map { index in "k\(Int.random(in: 0...99_999, using: &random))-\(index)" }
        let connection = try await PostgresFixture.connectToNewDatabase(logger: Self.logger)
        do {
            let tables: [(name: String, type: String, ids: [String], sorted: [String])] = [
                ("\"Numbers\"", "bigint", numbers.map(String.init), numbers.sorted().map(String.init)),
                ("\"Uuids\"", "uuid", uuids, uuids.sorted()),
                ("\"Strings\"", "text", strings, []),
            ]
            for table in tables {
                try await connection.query(PostgresQuery(unsafeSQL: """
                    CREATE TABLE \(table.name) (_id \(table.type) PRIMARY KEY, doc jsonb NOT NULL, _meta jsonb)
                    """), logger: Self.logger)
                let values = table.ids.map { "('\($0)'::\(table.type), '{}'::jsonb)" }.joined(separator: ", ")
                try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table.name) (_id, doc) VALUES \(values)"),
                                           logger: Self.logger)
                let paged = try await Self.pagedIds(connection, table: table.name, idType: table.type, limit: 100)
                #expect(paged.count == table.ids.count, "\(table.name): \(paged.count) rows read of \(table.ids.count)")
                #expect(Set(paged) == Set(table.ids), "\(table.name): rows left out")
                // Text keys are in the database's collation, the others in their type's order.
                if !table.sorted.isEmpty { #expect(paged == table.sorted, "\(table.name): not in key order") }
            }
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static func bytes(_ random: inout SplitMix64) -> uuid_t {
        var value = [UInt8](repeating: 0, count: 16)
        for index in value.indices { value[index] = UInt8.random(in: 0...255, using: &random) }
        return (value[0], value[1], value[2], value[3], value[4], value[5], value[6], value[7],
                value[8], value[9], value[10], value[11], value[12], value[13], value[14], value[15])
    }
}
