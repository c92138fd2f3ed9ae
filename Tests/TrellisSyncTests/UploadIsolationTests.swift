import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport
@testable import TrellisSyncServer

/// One user's worst uploads do not hold up another user's (issue 36 item 4): the costly parts
/// of an upload (its merge, its row writes, the documents' copies into the history) run
/// outside the global history lock, which covers only the numbering of its history entries
/// (an index update each, at most `--max-changes-per-upload`), and each connection is held to
/// a rate.
///
/// Latency is measured, not assumed: the victim's upload-to-acknowledgement latency while an
/// attacker uploads is compared with the same measurement without the attacker, on the same
/// server, so a slow or loaded machine raises both. `TRELLIS_ISOLATION_TEST=1` runs it,
/// `TRELLIS_ISOLATION_REPORT=1` prints the figures.
@Suite(.serialized)
struct UploadIsolationTests {
    /// What the attacker's uploads may add to the victim's latency (its median and its slowest).
    static let allowedDelay = Duration.milliseconds(100)

    /// The attacker's kinds of upload.
    static let kinds = [1: "list merges", 2: "largest message", 3: "most changes"]

    /// The kind of the attacker's upload `uploadId`: each kind-1 and kind-2 upload is followed by
    /// two kind-3 ones (short: without them, few victim samples would fall in their time).
    static func kind(of uploadId: Int64) -> Int { [1, 3, 3, 2, 3, 3][Int((uploadId - 1) % 6)] }

    /// The server's limit of changes per upload (`--max-changes-per-upload`'s default).
    static let maxChanges = 1_000

    /// A one-change upload (a new dog) as upload `uploadId`.
    static func oneChange(_ uploadId: Int64, clientId: String) -> SyncMessage {
        let id = ObjectId.generate().stringValue
        let key = JSONValue.object(["$oid": .string(id)])
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0,
                                    clientId: clientId).description
        return .upload(.init(uploadId: uploadId, changes: [
            SyncObjectChange(className: "SyncDog", primaryKey: key, kind: .insert, timestamp: stamp,
                             fields: [.set(name: "_id", value: key), .set(name: "name", value: .string("dog \(uploadId)"))]),
        ]))
    }

    /// The victim: `count` one-change uploads one after another (a short pause between), each
    /// timed from sending to its acknowledgement.
    static func latencies(_ channel: inout RawSyncChannel, clientId: String, from first: Int64, count: Int)
        async throws -> [Duration]
    {
        var measured = [Duration]()
        for uploadId in first..<(first + Int64(count)) {
            let start = ContinuousClock.now
            try await channel.send(oneChange(uploadId, clientId: clientId))
            _ = try await channel.collect { if case .ack(let ack) = $0 { ack.uploadId == uploadId } else { false } }
            measured.append(ContinuousClock.now - start)
            try await Task.sleep(for: .milliseconds(40))
        }
        return measured
    }

    /// The median and the 90th percentile.
    static func summary(_ values: [Duration]) -> (median: Duration, p90: Duration) {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return (.zero, .zero) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 9 / 10)])
    }

    static func ms(_ duration: Duration) -> String {
        String(format: "%.1f ms", Double(duration.components.seconds) * 1000
            + Double(duration.components.attoseconds) / 1e15)
    }

    /// The attacker's list-merge upload: `objects` tasks whose stored list of 1,000 steps the
    /// upload edits from another base of 1,000 to another 1,000 (each merge fills two longest-
    /// common-subsequence tables of a million cells, the most the merge allows), and one list of
    /// 20,000 elements reversed.
    static func listMergeAttack(_ uploadId: Int64, ids: [String], clientId: String) -> SyncMessage {
        let base = (0..<1000).map { JSONValue.string("b\($0)") }
        let local = (0..<1000).map { JSONValue.string("l\($0)") }
        var changes = [SyncObjectChange]()
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0,
                                    clientId: clientId).description
        for id in ids.dropLast() {
            changes.append(SyncObjectChange(className: "SyncTask", primaryKey: .object(["$oid": .string(id)]),
                                            kind: .update, timestamp: stamp,
                                            fields: [.list(name: "steps", base: base, value: local)]))
        }
        if let last = ids.last {
            let long = (0..<20_000).map { JSONValue.string("s\($0)") }
            changes.append(SyncObjectChange(className: "SyncTask", primaryKey: .object(["$oid": .string(last)]),
                                            kind: .update, timestamp: stamp,
                                            fields: [.list(name: "steps", base: long, value: long.reversed())]))
        }
        return .upload(.init(uploadId: uploadId, changes: changes))
    }

    /// Random letters and digits (seeded), which PostgreSQL cannot compress: the titles of the
    /// largest message are windows of it, so the whole message is written to the history's
    /// TOAST as it is.
    static let noise: [Character] = {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        var random = SplitMix64(seed: 36)
        return (0..<400_000).map { _ in alphabet[Int(random.next() % 64)] }
    }()

    /// The attacker's largest message: inserts of tasks with long titles (60,000 characters
    /// that do not compress, each different), `bytes` in all.
    static func largestMessage(_ uploadId: Int64, bytes: Int, clientId: String) -> SyncMessage {
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0,
                                    clientId: clientId).description
        var changes = [SyncObjectChange]()
        for index in 0..<(bytes / 60_400) {
            let start = (index * 997 + Int(uploadId) * 131) % (noise.count - 60_000)
            let title = String(noise[start..<(start + 60_000)])
            let key = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
            changes.append(SyncObjectChange(className: "SyncTask", primaryKey: key, kind: .insert, timestamp: stamp,
                                            fields: [.set(name: "_id", value: key), .set(name: "title", value: .string(title))]))
        }
        return .upload(.init(uploadId: uploadId, changes: changes))
    }

    /// The attacker's upload with the most history entries the server takes: `count` small
    /// inserts (each a history entry to number under the history lock).
    static func mostChanges(_ uploadId: Int64, count: Int, clientId: String) -> SyncMessage {
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0,
                                    clientId: clientId).description
        let changes = (0..<count).map { index in
            let key = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
            return SyncObjectChange(className: "SyncDog", primaryKey: key, kind: .insert, timestamp: stamp,
                                    fields: [.set(name: "_id", value: key), .set(name: "name", value: .string("a\(index)"))])
        }
        return .upload(.init(uploadId: uploadId, changes: changes))
    }

    /// Opens a raw session for a new anonymous user; its client id.
    static func open(_ channel: inout RawSyncChannel, _ token: String) async throws -> String {
        let clientId = "raw-\(UUID().uuidString.lowercased())"
        try await channel.send(RawSyncClient.hello(token: token, clientId: clientId))
        let frames = try await channel.collect { if case .welcome = $0 { true } else if case .error = $0 { true } else { false } }
        #expect(RawSyncClient.errors(frames).isEmpty)
        return clientId
    }

    /// A measurement: it runs alone (`TRELLIS_ISOLATION_TEST=1`, as Scripts/test.sh runs it after
    /// the other sync tests), since tests running beside it would be in the figures, and its
    /// attacker would slow them.
    ///
    /// What is asserted is what the design guarantees on a loaded machine, not a wall-clock
    /// figure (which a build beside it can multiply): no upload of the victim waits for an
    /// attacker's upload to be handled. The victim's slowest upload during each kind of attack
    /// is compared with how long the attacker's uploads of that kind take (both measured at the
    /// same moments, so under the same load): a victim upload queued behind the attacker's
    /// work (the cooperative pool held by its unmasking and decoding, or the victim's session
    /// reading what the attacker added) waits a large part of it. The figures in docs/SYNC.md,
    /// "Fairness between users", come from this test's report.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TRELLIS_ISOLATION_TEST"] == "1"))
    func anotherUsersWorstUploadsDelayAOneChangeUploadByLessThanAHundredMilliseconds() async throws {
        let fixture = try SyncFixture()
        let server = fixture.server
        let maxMessage = 16 << 20
        // The attacker's tasks, each with a list of 1,000 steps (made with SQL: fast).
        let taskIds = (0..<60).map { _ in ObjectId.generate().stringValue }
        try PostgresFixture.psql(fixture.database, """
            INSERT INTO "SyncTask" (_id, doc)
            SELECT id, jsonb_build_object('_id', jsonb_build_object('$oid', id), 'owner', 'attacker', 'title', '',
              'priority', 0, 'steps', (SELECT jsonb_agg('c' || n) FROM generate_series(1, 1000) AS n),
              'tags', '[]'::jsonb, 'scores', '{}'::jsonb)
            FROM unnest(ARRAY['\(taskIds.joined(separator: "','"))']) AS id
            """)
        let victimToken = try await testApp(server.baseURL).login(credentials: .anonymous).accessToken ?? ""
        let attackerToken = try await testApp(server.baseURL).login(credentials: .anonymous).accessToken ?? ""
        let progress = AttackProgress()
        // The attacker is another device: in this process, its work (encoding 16 MB messages,
        // masking them as a WebSocket client must) runs on a thread and an event loop of its own,
        // so what is measured is the server, not the victim's client waiting for the attacker's.
        let attackerLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { attackerLoop.shutdownGracefully { _ in } }
        // The longest wait for a lock in this database during the attack (PostgreSQL's
        // `pg_locks.waitstart`), sampled every 10 ms: what one upload can make another wait for
        // inside the database (history lock, object locks, rows). A sample taken late sees the
        // wait so far, never more than it lasted.
        let probe = Task {
            let connection = try await HistoryOrderTests.connect(fixture.database)
            // Cancelled mid-query, the query throws: the connection is closed either way.
            defer { Task { try? await connection.close() } }
            while !Task.isCancelled {
                for try await (wait, lock) in try await connection.query("""
                    SELECT coalesce(extract(epoch FROM clock_timestamp() - l.waitstart) * 1000, 0)::float8,
                      l.locktype || ' ' || coalesce(l.objid::text, '')
                    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE NOT l.granted AND a.datname = current_database()
                    """, logger: HistoryOrderTests.logger).decode((Double, String).self)
                {
                    progress.longestLockWait.withLock { if wait > $0.milliseconds { $0 = (wait, lock) } }
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        let (baseline, underAttack) = try await RawSyncClient.connect(port: server.port, timeout: .seconds(600)) {
            victim -> ([Duration], [Int: [Duration]]) in
            let victimId = try await Self.open(&victim, victimToken)
            // Warm up (first statements of a connection are slower), then the baseline.
            _ = try await Self.latencies(&victim, clientId: victimId, from: 1, count: 5)
            let baseline = try await Self.latencies(&victim, clientId: victimId, from: 6, count: 20)
            // The attacker sends its worst uploads one after another, a list-merge upload then a
            // largest message, again and again, while the victim measures.
            let attack = Task(executorPreference: Self.attackerThread) {
                try await RawSyncClient.connect(port: server.port, maxFrameSize: maxMessage, timeout: .seconds(600),
                                                eventLoopGroup: attackerLoop) { attacker in
                    let attackerId = try await Self.open(&attacker, attackerToken)
                    var uploadId: Int64 = 1
                    while !Task.isCancelled {
                        let kind = Self.kind(of: uploadId)
                        let message = switch kind {
                        case 1: Self.listMergeAttack(uploadId, ids: taskIds, clientId: attackerId)
                        case 2: Self.largestMessage(uploadId, bytes: maxMessage - (64 << 10), clientId: attackerId)
                        default: Self.mostChanges(uploadId, count: Self.maxChanges, clientId: attackerId)
                        }
                        let text = SyncCoding.encode(message)
                        let start = ContinuousClock.now
                        progress.inFlight.store(kind, ordering: .sequentiallyConsistent)
                        try await attacker.send(text: text)
                        progress.sent.add(1, ordering: .sequentiallyConsistent)
                        let frames = try await attacker.collect {
                            if case .ack(let ack) = $0 { ack.uploadId == uploadId } else { false }
                        }
                        progress.inFlight.store(0, ordering: .sequentiallyConsistent)
                        let took = ContinuousClock.now - start
                        progress.durations.withLock { $0[kind, default: []].append(took) }
                        progress.report.withLock { $0.append("attacker upload \(uploadId) (\(Self.kinds[kind] ?? ""), "
                            + "\(text.utf8.count) bytes): \(Self.ms(took)) to its ack, errors "
                            + "\(RawSyncClient.errors(frames).map(\.code))") }
                        uploadId += 1
                    }
                }
            }
            var underAttack = [Int: [Duration]]()
            var next: Int64 = 26
            // Samples sent while an attack upload is being handled (sent, not yet acknowledged),
            // until every kind was acknowledged once and 15 samples of each were taken (or 4 min).
            let deadline = ContinuousClock.now + .seconds(240)
            while Self.kinds.keys.contains(where: { (underAttack[$0]?.count ?? 0) < 15 })
                || progress.sent.load(ordering: .sequentiallyConsistent) < 7, ContinuousClock.now < deadline {
                let during = progress.inFlight.load(ordering: .sequentiallyConsistent)
                let sample = try await Self.latencies(&victim, clientId: victimId, from: next, count: 1)
                next += 1
                if during != 0 { underAttack[during, default: []] += sample }
            }
            attack.cancel()
            probe.cancel()
            return (baseline, underAttack)
        }
        let (baseMedian, baseP90) = Self.summary(baseline)
        let baseMax = baseline.max() ?? .zero
        _ = try? await probe.value
        let (longestWait, waitedLock) = progress.longestLockWait.withLock { $0 }
        let durations = progress.durations.withLock { $0 }
        var lines = progress.report.withLock { $0 } + [
            String(format: "longest lock wait in PostgreSQL: %.1f ms (%@)", longestWait, waitedLock),
            "victim baseline: median \(Self.ms(baseMedian)), p90 \(Self.ms(baseP90)), max \(Self.ms(baseMax)) "
                + "(\(baseline.count) uploads)",
        ]
        for (kind, samples) in underAttack.sorted(by: { $0.key < $1.key }) {
            let (median, p90) = Self.summary(samples)
            let attackMedian = Self.summary(durations[kind] ?? []).median
            lines.append("victim during \(Self.kinds[kind] ?? ""): median \(Self.ms(median)), p90 \(Self.ms(p90)), max "
                + "\(Self.ms(samples.max() ?? .zero)) (\(samples.count) uploads); the attacker's uploads of this kind: "
                + "median \(Self.ms(attackMedian)) to their ack (\(durations[kind]?.count ?? 0))")
        }
        if ProcessInfo.processInfo.environment["TRELLIS_ISOLATION_REPORT"] == "1" {
            print(lines.joined(separator: "\n"))
            // With TRELLIS_SYNC_LOG=debug the server logs where each upload's time went.
            print(server.log.split(separator: "\n").filter { $0.contains("applied and acknowledged") }.joined(separator: "\n"))
        }
        // Inside the database no upload waits 100 ms for the attacker: the history lock covers
        // only the numbering of its entries (at most --max-changes-per-upload), the rest runs
        // outside it (before: its documents were copied under it, 0.6-1.5 s for the largest
        // message).
        #expect(longestWait < 100, "\(lines)")
        for kind in Self.kinds.keys.sorted() {
            let samples = underAttack[kind] ?? []
            #expect(samples.count >= 15, "\(lines)")
            // The typical upload of the other user is delayed by less than 100 ms (median).
            #expect(Self.summary(samples).median < baseMedian + Self.allowedDelay, "\(lines)")
            // None waits for the attacker's upload to be handled: the slowest takes less than half
            // the time the attacker's uploads of that kind take (their median), beyond the slowest
            // without the attack, and at least 100 ms more. Both are measured at the same moments:
            // a loaded machine slows both. (Measured: see docs/SYNC.md, "Fairness between users";
            // the deterministic form of this is sessionsBusyOnTheCPUWithLargeMessages…, below.)
            let attackMedian = Self.summary(durations[kind] ?? []).median
            let bound = baseMax + max(Self.allowedDelay, attackMedian / 2)
            #expect((samples.max() ?? .zero) < bound, "slowest above \(Self.ms(bound)): \(lines)")
        }
    }

    /// Where the attacker's work runs in this process (not on the cooperative pool the victim's
    /// client uses).
    static let attackerThread = ThreadPoolExecutor(name: "attacker", threads: 1)

    /// A session busy on the CPU for seconds with a large message (unmasking, checking and
    /// decoding 16 MB took a debug build 5.4 s) holds one thread of the server, not the other
    /// sessions': with as many such sessions as the machine has cores (on Swift's cooperative
    /// pool, a thread per core, they held every thread and the other user's upload waited for
    /// them), the other user's one-change upload is acknowledged while they are still busy.
    /// The CPU work is `--busy-per-large-message` (a busy loop before decoding each message of
    /// 64 KiB or more), so the test needs no 16 MB messages and its bound is the design's: the
    /// victim's uploads end before the busy sessions' work does, however loaded the machine.
    @Test func sessionsBusyOnTheCPUWithLargeMessagesDoNotHoldUpAnotherUsersUpload() async throws {
        let busyMilliseconds = 10_000
        let fixture = try SyncFixture(serverArguments: ["--busy-per-large-message", String(busyMilliseconds)])
        let server = fixture.server
        let busyCount = min(8, max(2, ProcessInfo.processInfo.activeProcessorCount))
        let victimToken = try await testApp(server.baseURL).login(credentials: .anonymous).accessToken ?? ""
        var tokens = [String]()
        for _ in 0..<busyCount {
            tokens.append(try await testApp(server.baseURL).login(credentials: .anonymous).accessToken ?? "")
        }
        let attackerTokens = tokens
        @Sendable func busyLines() -> Int { server.log.components(separatedBy: "fault injection: busy for").count - 1 }
        @Sendable func doneLines() -> Int { server.log.components(separatedBy: "fault injection: done being busy").count - 1 }
        let outcome = try await RawSyncClient.connect(port: server.port, timeout: .seconds(120)) {
            victim -> (latencies: [Duration], busyAtTheEnd: Int, doneAtTheEnd: Int) in
            let victimId = try await Self.open(&victim, victimToken)
            _ = try await Self.latencies(&victim, clientId: victimId, from: 1, count: 2)
            // Each attacker sends one upload of ~100 KB: its session is then busy for seconds.
            let attackers = attackerTokens.map { token in
                Task {
                    try await RawSyncClient.connect(port: server.port, timeout: .seconds(120)) { attacker in
                        let attackerId = try await Self.open(&attacker, token)
                        try await attacker.send(Self.largestMessage(1, bytes: 2 * 60_400, clientId: attackerId))
                        _ = try await attacker.collect { if case .ack = $0 { true } else { false } }
                    }
                }
            }
            defer { for attacker in attackers { attacker.cancel() } }
            #expect(try await eventually(.seconds(60), interval: .milliseconds(5)) { busyLines() >= busyCount },
                    "the attackers' sessions did not start being busy: \(server.log)")
            let measured = try await Self.latencies(&victim, clientId: victimId, from: 3, count: 1)
            let outcome = (measured, busyLines(), doneLines())
            for attacker in attackers { try await attacker.value }
            return outcome
        }
        let report = "victim's upload: \(outcome.latencies.map(Self.ms)); busy sessions when it was acknowledged: "
            + "\(outcome.busyAtTheEnd - outcome.doneAtTheEnd) of \(busyCount)"
        if ProcessInfo.processInfo.environment["TRELLIS_ISOLATION_REPORT"] == "1" { print(report) }
        #expect(outcome.latencies.count == 1, "\(report)")
        // Every busy session was still busy when the victim's upload was acknowledged.
        #expect(outcome.busyAtTheEnd >= busyCount && outcome.doneAtTheEnd == 0, "\(report)\n\(server.log)")
    }

    /// The merge runs without locks, so the server checks under the history lock that the
    /// objects are still as merged; here an SQL update lands between the merge and the write,
    /// and the upload is merged again instead of overwriting it.
    @Test func objectChangedByAnotherWriterDuringTheMergeIsMergedAgainNotOverwritten() async throws {
        let fixture = try SyncFixture(serverArguments: ["--pause-after-merge", "1500"])
        let device = try await Device(server: fixture.server)
        let id = ObjectId.generate()
        try device.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "start", "priority": 1])) }
        try await device.sync()
        try device.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "from the device" }
        let session = try device.session
        let upload = Task { try await withTimeout(.seconds(60)) { try await session.wait(for: .upload) } }
        // Once the server has merged the device's upload, SQL changes another field of the object.
        #expect(try await eventually(.seconds(30)) {
            fixture.server.log.components(separatedBy: "pausing 1500 ms after merging upload").count >= 3
        })
        try PostgresFixture.psql(fixture.database, """
            UPDATE "SyncTask" SET doc = jsonb_set(doc, '{priority}', '{"$numberLong": "7"}')
            """)
        try await upload.value
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "from the device")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->'priority'->>'$numberLong' FROM \"SyncTask\"") == "7")
        await device.close()
    }
}

/// What the attacker of ``UploadIsolationTests`` is doing: which kind of its uploads is being
/// handled (sent, not acknowledged; 0: none), and how many it sent.
final class AttackProgress: Sendable {
    let inFlight = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    /// A line per attack upload: its kind, size, and time to its acknowledgement.
    let report = Mutex<[String]>([])
    /// How long the attacker's uploads took, sent to acknowledged, by kind.
    let durations = Mutex<[Int: [Duration]]>([:])
    /// The longest lock wait seen in PostgreSQL, and the lock (type and object).
    let longestLockWait = Mutex<(milliseconds: Double, lock: String)>((0, "none"))
}
