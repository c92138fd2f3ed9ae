import Foundation
import Logging
import Synchronization
import Testing
@testable import TrellisSyncServer
import TrellisSyncProtocol
import WSClient

/// No user-controlled work beyond linear (issue 36 item 4): list merges are linear plus a
/// bounded table, and a connection cannot make the server read a large message before its
/// token is checked.
struct MessageLimitTests {
    @Test func listMergeOfTwentyThousandElementsIsBoundedAndKeepsEveryInsertion() {
        let base = (0..<20_000).map { JSONValue.int(Int64($0)) }
        // The client reversed the list and added an element; meanwhile another client appended one.
        let local = base.reversed() + [JSONValue.string("mine")]
        let current = base + [JSONValue.string("theirs")]
        let merged = DocumentMerge.mergeList(current: current, base: base, local: Array(local))
        #expect(merged.contains(.string("mine")))
        #expect(merged.contains(.string("theirs")))
        #expect(Set(merged).count == merged.count)
        #expect(merged.count == base.count + 2)
        // Small lists still merge by longest common subsequence.
        let small = DocumentMerge.mergeList(current: [.int(1), .int(2), .int(3), .int(9)], base: [.int(1), .int(2), .int(3)],
                                            local: [.int(1), .int(5), .int(3)])
        #expect(small == [.int(1), .int(5), .int(3), .int(9)])
    }

    @Test func firstMessageLargerThanAHelloIsNotRead() async throws {
        let fixture = try SyncFixture(serverArguments: ["--max-message-bytes", String(4 << 20)])
        let closed = Mutex(false)
        let big = String(repeating: "x", count: 2 << 20)
        try await RawSyncClient.connect(port: fixture.server.port, maxFrameSize: 8 << 20, timeout: .seconds(30)) { channel in
            try await channel.send(text: big)
            while try await channel.next() != nil {}
            closed.withLock { $0 = true }
        }
        #expect(closed.withLock { $0 })
        #expect(fixture.server.log.contains("whose first message has \(2 << 20) bytes"))
    }

    @Test func listMergesOfOneUploadShareOneTableBudget() {
        let base = (0..<1000).map { JSONValue.string("b\($0)") }
        let local = (0..<1000).map { JSONValue.string("l\($0)") }
        let current = (0..<1000).map { JSONValue.string("c\($0)") }
        var budget = DocumentMerge.maxMatchCellsPerUpload
        // The first list fills its two million-cell tables; the next find the budget spent and
        // match prefix and suffix only (here none): linear, and still every insertion is kept.
        let first = DocumentMerge.mergeList(current: current, base: base, local: local, matchBudget: &budget)
        #expect(budget == 0)
        let second = DocumentMerge.mergeList(current: current, base: base, local: local, matchBudget: &budget)
        #expect(budget == 0)
        for merged in [first, second] {
            #expect(Set(merged) == Set(current + local))
        }
    }

    @Test func rateLimitSpendsASecondOfBudgetThenSlowsToTheRate() {
        let start = ContinuousClock.now
        var limit = ConnectionRateLimit(messagesPerSecond: 10, bytesPerSecond: 1000, maxMessageBytes: 4000)
        // A second's worth of messages at once goes through.
        for _ in 0..<10 { #expect(limit.delay(forMessageOf: 10, at: start) == .zero) }
        // The next waits a tenth of a second, the one after two tenths.
        #expect(limit.delay(forMessageOf: 10, at: start) == .milliseconds(100))
        #expect(limit.delay(forMessageOf: 10, at: start) == .milliseconds(200))
        // Bytes: the bucket holds one largest message (4,000 > 1,000 a second), then 1,000 a second.
        var bytes = ConnectionRateLimit(messagesPerSecond: 1000, bytesPerSecond: 1000, maxMessageBytes: 4000)
        #expect(bytes.delay(forMessageOf: 4000, at: start) == .zero)
        #expect(bytes.delay(forMessageOf: 500, at: start) == .milliseconds(500))
        // After waiting, the budget has refilled by what the wait was worth.
        #expect(bytes.delay(forMessageOf: 500, at: start + .milliseconds(500)) == .milliseconds(500))
        #expect(bytes.delay(forMessageOf: 0, at: start + .seconds(10)) == .zero)
    }

    @Test func connectionOverItsMessageRateIsSlowedNotCutOff() async throws {
        let fixture = try SyncFixture(serverArguments: ["--max-messages-per-second", "5"])
        let token = try await testApp(fixture.server.baseURL).login(credentials: .anonymous).accessToken ?? ""
        let (elapsed, marks) = try await RawSyncClient.connect(port: fixture.server.port, timeout: .seconds(60)) { channel in
            try await channel.send(RawSyncClient.hello(token: token))
            _ = try await channel.collect { if case .welcome = $0 { true } else { false } }
            let start = ContinuousClock.now
            // 20 marks at once: 5 go through at once (with the hello, 4), the others at 5 a second.
            for id in 1...20 { try await channel.send(.mark(.init(id: Int64(id)))) }
            var marks = [Int64]()
            while marks.count < 20, let frame = try await channel.next() {
                if case .mark(let mark) = frame { marks.append(mark.id) }
            }
            try await channel.close()
            return (ContinuousClock.now - start, marks)
        }
        #expect(marks == Array(1...20))
        // At least (20 - 4) / 5 s; a lower bound, so a slow machine cannot fail it.
        #expect(elapsed >= .milliseconds(3000), "\(elapsed)")
        #expect(fixture.server.log.contains("slowing a sync connection"))
    }

    /// The default rate lets a device send 100 messages at once (50,000 changes at the
    /// client's 500 an upload): a backlog uploads at the server's pace, not at the 10,000
    /// changes a second the first defaults (20 messages) allowed. Counted, not timed: 60
    /// messages sent at once fit the default bucket whatever the machine's speed.
    @Test func theDefaultRateDoesNotSlowSixtyMessagesAtOnce() async throws {
        let fixture = try SyncFixture()
        let token = try await testApp(fixture.server.baseURL).login(credentials: .anonymous).accessToken ?? ""
        let marks = try await RawSyncClient.connect(port: fixture.server.port, timeout: .seconds(60)) { channel in
            try await channel.send(RawSyncClient.hello(token: token))
            _ = try await channel.collect { if case .welcome = $0 { true } else { false } }
            for id in 1...60 { try await channel.send(.mark(.init(id: Int64(id)))) }
            var marks = [Int64]()
            while marks.count < 60, let frame = try await channel.next() {
                if case .mark(let mark) = frame { marks.append(mark.id) }
            }
            try await channel.close()
            return marks
        }
        #expect(marks == Array(1...60))
        #expect(!fixture.server.log.contains("slowing a sync connection"))
    }

    /// An upload's history entries are numbered under the history lock, one index update
    /// each, so the server bounds the changes of one upload (`--max-changes-per-upload`,
    /// 1,000; the client sends at most 500): a larger upload is refused whole with 230 naming
    /// the limit and acknowledged (the client drops it), one at the limit is applied.
    @Test func uploadWithMoreChangesThanTheLimitIsRefusedWholeAndOneAtTheLimitApplied() async throws {
        let fixture = try SyncFixture()
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0, clientId: "raw")
            .description
        func inserts(_ count: Int, _ prefix: String) -> [SyncObjectChange] {
            (0..<count).map { index in
                let key = JSONValue.object(["$oid": .string(String(format: "%@%020d", prefix, index))])
                return SyncObjectChange(className: "SyncDog", primaryKey: key, kind: .insert, timestamp: stamp,
                                        fields: [.set(name: "_id", value: key), .set(name: "name", value: .string("d\(index)"))])
            }
        }
        let refused = RawSyncClient.errors(try await RawSyncClient.upload(fixture.server, inserts(1_001, "aaaa")))
        #expect(refused.map(\.code) == [230])
        #expect(refused.first?.message.contains("1001 changes") == true)
        #expect(refused.first?.message.contains("--max-changes-per-upload 1000") == true)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "0")

        let applied = RawSyncClient.errors(try await RawSyncClient.upload(fixture.server, inserts(1_000, "bbbb")))
        #expect(applied.isEmpty)
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM \"SyncDog\"") == "1000")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT count(*) FROM trellis_history") == "1000")
        // Numbered at the commit as one block, in the order written.
        #expect(try PostgresFixture.psql(fixture.database, """
            SELECT max(version) - min(version) + 1 = 1000 AND bool_and(doc->>'name' = 'd' || (version - min_v)::text)
            FROM trellis_history, (SELECT min(version) AS min_v FROM trellis_history) m GROUP BY min_v
            """) == "t")
    }
}
