import Foundation
import Logging
import PostgresNIO
import Testing
import Trellis
import TrellisSync
import TrellisTestSupport

/// History order (docs/SYNC.md, "History order"): a client resumes after the newest version it
/// applied, so no entry may become visible below a version a reader has already seen. Entries
/// are written with their rows, pending, and get their versions when their transaction commits:
/// a writer that wrote first but commits last gets the later version, and a client that synced
/// in between still receives its change.
@Suite struct HistoryOrderTests {
    static let logger = Logger(label: "history-order")

    /// A connection of its own to `database` (postgres://…).
    static func connect(_ database: String) async throws -> PostgresConnection {
        try await PostgresFixture.connect(database, logger: logger)
    }

    static func names(_ device: Device) throws -> [String] {
        try device.run { realm in realm.objects(SyncDog.self).map(\.name).sorted() }
    }

    /// The device's dogs once it has both (or after 30 s of syncing).
    static func syncedNames(_ device: Device) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        var names = [String]()
        repeat {
            try await device.sync()
            names = try Self.names(device)
        } while names.count < 2 && ContinuousClock.now < deadline
        return names
    }

    /// The history version of a dog's entry, as another transaction sees it ("" when none).
    static func version(of id: String, in database: String) throws -> String {
        try PostgresFixture.psql(database, """
            SELECT max(version) FROM trellis_history WHERE pk = '{"$oid": "\(id)"}'::jsonb
            """)
    }

    /// An SQL transaction writes a dog (its entry pending: a negative version its own
    /// transaction sees, nobody else) and stays open while a device's upload commits and
    /// another device downloads it; then it commits: its entry gets a version after the
    /// upload's, and the device that synced in between receives the dog.
    @Test func sqlChangeWrittenFirstButCommittedLastReachesADeviceThatSyncedInBetween() async throws {
        let fixture = try SyncFixture()
        let reader = try await Device(server: fixture.server)
        let writer = try await Device(server: fixture.server)
        try await reader.sync()
        try await writer.sync()
        let early = ObjectId.generate().stringValue
        let sql = try await Self.connect(fixture.database)
        do {
            try await sql.query("BEGIN", logger: Self.logger)
            let document = #"{"_id": {"$oid": "\#(early)"}, "name": "written first", "age": 1}"#
            try await sql.query("INSERT INTO \"SyncDog\" (_id, doc) VALUES (\(early), \(document)::jsonb)", logger: Self.logger)
            var pending = [Int64]()
            for try await (version) in try await sql.query("""
                SELECT version FROM trellis_history WHERE pk = jsonb_build_object('$oid', \(early)::text)
                """, logger: Self.logger).decode(Int64.self) { pending.append(version) }
            #expect(pending.count == 1 && pending.allSatisfy { $0 < 0 }, "pending entry: \(pending)")
            #expect(try Self.version(of: early, in: fixture.database) == "")

            let late = ObjectId.generate()
            try writer.write { realm in realm.add(SyncDog(value: ["_id": late, "name": "committed first", "age": 2])) }
            try await writer.sync()
            try await reader.sync()
            #expect(try Self.names(reader) == ["committed first"])

            try await sql.query("COMMIT", logger: Self.logger)
            let earlyVersion = try #require(Int64(try Self.version(of: early, in: fixture.database)))
            let lateVersion = try #require(Int64(try Self.version(of: late.stringValue, in: fixture.database)))
            #expect(earlyVersion > lateVersion)
            try await sql.close()
        } catch {
            try? await sql.close()
            throw error
        }
        #expect(try await Self.syncedNames(reader) == ["committed first", "written first"])
        await reader.close()
        await writer.close()
    }

    /// Two servers on one database: an upload to the first writes its rows and entries, then
    /// its commit is held; meanwhile an upload to the second commits and a device of the second
    /// downloads it. When the held upload commits, its entry comes after, and that device,
    /// which has passed the other upload's version, receives it too.
    @Test func uploadThatWroteFirstButCommitsLastIsNotSkippedByADeviceOfAnotherServer() async throws {
        let release = FileManager.default.temporaryDirectory.appendingPathComponent("release-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: release) }
        let fixture = try SyncFixture(serverArguments: ["--hold-upload-commit-until", release.path])
        let other = try ServerProcess(database: fixture.database, schema: fixture.schema)
        let slow = try await Device(server: fixture.server)
        let fast = try await Device(server: other)
        let reader = try await Device(server: other)
        try await reader.sync()
        try await fast.sync()
        try await withTimeout(.seconds(60)) { try await slow.session.wait(for: .download) }

        let first = ObjectId.generate()
        try slow.write { realm in realm.add(SyncDog(value: ["_id": first, "name": "written first", "age": 1])) }
        let held = try slow.session
        let slowUpload = Task { try await withTimeout(.seconds(120)) { try await held.wait(for: .upload) } }
        #expect(try await eventually(.seconds(60)) { fixture.server.log.contains("holding its commit until") })
        // Its row and entry are written, not committed: nobody else sees them.
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM trellis_history") == "0")

        let second = ObjectId.generate()
        try fast.write { realm in realm.add(SyncDog(value: ["_id": second, "name": "committed first", "age": 2])) }
        try await fast.sync()
        try await reader.sync()
        #expect(try Self.names(reader) == ["committed first"])

        #expect(FileManager.default.createFile(atPath: release.path, contents: Data()))
        try await slowUpload.value
        let firstVersion = try #require(Int64(try Self.version(of: first.stringValue, in: fixture.database)))
        let secondVersion = try #require(Int64(try Self.version(of: second.stringValue, in: fixture.database)))
        #expect(firstVersion > secondVersion)
        #expect(try await Self.syncedNames(reader) == ["committed first", "written first"])
        await slow.close()
        await fast.close()
        await reader.close()
    }

    /// Randomized (seeded): four SQL writers insert dogs in transactions of one to three rows
    /// that stay open a random while (so they commit in another order than they wrote), and a
    /// reader reads the history the way servers do (`version > last ORDER BY version`, moving
    /// `last` to the newest it read) all along. Every committed entry reaches the reader, each
    /// The numbering at the commit, both ways: a transaction whose pending versions are all
    /// its own (numbered straight from them) and one whose range also holds the pending
    /// versions another transaction drew and rolled back (numbered by rank). Each gets
    /// consecutive versions in the order it wrote its rows.
    @Test func entriesAreNumberedInWriteOrderWhetherOrNotAnotherTransactionDrewPendingVersionsBetween() async throws {
        let fixture = try SyncFixture()
        let writer = try await Self.connect(fixture.database)
        let other = try await Self.connect(fixture.database)
        func insert(_ name: String, on connection: PostgresConnection) async throws {
            let id = ObjectId.generate().stringValue
            let document = #"{"_id": {"$oid": "\#(id)"}, "name": "\#(name)", "age": 1}"#
            try await connection.query("INSERT INTO \"SyncDog\" (_id, doc) VALUES (\(id), \(document)::jsonb)", logger: Self.logger)
        }
        // Alone: 6 rows.
        try await writer.query("BEGIN", logger: Self.logger)
        for row in 0..<6 { try await insert("alone-\(row)", on: writer) }
        try await writer.query("COMMIT", logger: Self.logger)
        // Interleaved with another transaction's rows, which it rolls back.
        try await writer.query("BEGIN", logger: Self.logger)
        try await other.query("BEGIN", logger: Self.logger)
        for row in 0..<6 {
            try await insert("mixed-\(row)", on: writer)
            try await insert("rolled back", on: other)
        }
        try await other.query("ROLLBACK", logger: Self.logger)
        try await writer.query("COMMIT", logger: Self.logger)
        try await writer.close()
        try await other.close()
        let stored = try PostgresFixture.psql(fixture.database, """
            SELECT string_agg(doc->>'name', ',' ORDER BY version), max(version) - min(version), min(version) > 0
            FROM trellis_history
            """)
        let names = (0..<6).map { "alone-\($0)" } + (0..<6).map { "mixed-\($0)" }
        #expect(stored == names.joined(separator: ",") + "|11|t")
    }

    /// once, and every transaction's entries have consecutive versions in the order written.
    @Test func readerFollowingTheHistoryWhileWritersCommitOutOfOrderMissesNoEntry() async throws {
        let fixture = try SyncFixture()
        let writers = 4, transactionsPerWriter = 25
        let read = try await withThrowingTaskGroup(of: [(version: Int64, name: String)].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var random = SplitMix64(seed: 3600 + UInt64(writer))
                    let connection = try await Self.connect(fixture.database)
                    for transaction in 0..<transactionsPerWriter {
                        try await connection.query("BEGIN", logger: Self.logger)
                        for row in 0..<(1 + Int(random.next() % 3)) {
                            let id = ObjectId.generate().stringValue
                            let document = #"{"_id": {"$oid": "\#(id)"}, "name": "w\#(writer)-t\#(transaction)-r\#(row)", "age": 1}"#
                            try await connection.query("INSERT INTO \"SyncDog\" (_id, doc) VALUES (\(id), \(document)::jsonb)",
                                                       logger: Self.logger)
                            try await Task.sleep(for: .milliseconds(Int(random.next() % 15)))
                        }
                        try await connection.query("COMMIT", logger: Self.logger)
                    }
                    try await connection.close()
                    return []
                }
            }
            var entries = [(version: Int64, name: String)]()
            let reader = try await Self.connect(fixture.database)
            var last: Int64 = 0
            let deadline = ContinuousClock.now + .seconds(120)
            // Until every writer's last transaction is read (its name ends the writer's run).
            while Set(entries.compactMap { $0.name.contains("-t\(transactionsPerWriter - 1)-r0") ? $0.name : nil }).count
                < writers, ContinuousClock.now < deadline
            {
                for try await (version, name) in try await reader.query("""
                    SELECT version, doc->>'name' FROM trellis_history WHERE version > \(last) ORDER BY version
                    """, logger: Self.logger).decode((Int64, String).self)
                {
                    entries.append((version, name))
                    last = version
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            try await group.waitForAll()
            for try await (version, name) in try await reader.query("""
                SELECT version, doc->>'name' FROM trellis_history WHERE version > \(last) ORDER BY version
                """, logger: Self.logger).decode((Int64, String).self) { entries.append((version, name)) }
            try await reader.close()
            return entries
        }
        let stored = try PostgresFixture.psql(fixture.database, "SELECT version || ' ' || (doc->>'name') FROM trellis_history ORDER BY version")
            .split(separator: "\n").map(String.init)
        // What the reader saw while following is exactly what is stored in the end: no entry
        // became visible below a version it had already passed.
        #expect(read.map { "\($0.version) \($0.name)" } == stored)
        // Each transaction's entries: consecutive versions, in the order its rows were written.
        var byTransaction = [String: [(version: Int64, row: Int)]]()
        for entry in read {
            let parts = entry.name.split(separator: "-")
            byTransaction[parts.dropLast().joined(separator: "-"), default: []].append((entry.version, Int(parts.last?.dropFirst() ?? "") ?? -1))
        }
        #expect(byTransaction.count == writers * transactionsPerWriter)
        for (name, rows) in byTransaction {
            #expect(rows.map(\.row) == Array(0..<rows.count), "\(name)")
            #expect(rows.map(\.version) == Array(rows[0].version..<(rows[0].version + Int64(rows.count))), "\(name)")
        }
    }
}
