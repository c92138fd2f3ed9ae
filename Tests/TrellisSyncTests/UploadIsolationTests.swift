import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// One user's worst uploads do not hold up another user's (issue 36 item 4): the costly part
/// of an upload (its merge) runs outside the global history lock, and each connection is held
/// to a rate.
///
/// Latency is measured, not assumed: the victim's upload-to-acknowledgement latency while an
/// attacker uploads is compared with the same measurement without the attacker, on the same
/// server, so a slow or loaded machine raises both. `TRELLIS_ISOLATION_TEST=1` runs it,
/// `TRELLIS_ISOLATION_REPORT=1` prints the figures.
@Suite(.serialized)
struct UploadIsolationTests {
    /// What the attacker's uploads may add to the victim's median latency.
    static let allowedDelay = Duration.milliseconds(100)

    /// The attacker's kinds of upload.
    static let kinds = [1: "list merges", 2: "largest message"]

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

    /// The attacker's largest message: inserts of tasks with long titles, `bytes` in all.
    static func largestMessage(_ uploadId: Int64, bytes: Int, clientId: String) -> SyncMessage {
        let stamp = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()), counter: 0,
                                    clientId: clientId).description
        let title = String(repeating: "t", count: 60_000)
        var changes = [SyncObjectChange]()
        for _ in 0..<(bytes / 60_400) {
            let key = JSONValue.object(["$oid": .string(ObjectId.generate().stringValue)])
            changes.append(SyncObjectChange(className: "SyncTask", primaryKey: key, kind: .insert, timestamp: stamp,
                                            fields: [.set(name: "_id", value: key), .set(name: "title", value: .string(title))]))
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

        let (baseline, underAttack) = try await RawSyncClient.connect(port: server.port, timeout: .seconds(600)) {
            victim -> ([Duration], [Int: [Duration]]) in
            let victimId = try await Self.open(&victim, victimToken)
            // Warm up (first statements of a connection are slower), then the baseline.
            _ = try await Self.latencies(&victim, clientId: victimId, from: 1, count: 5)
            let baseline = try await Self.latencies(&victim, clientId: victimId, from: 6, count: 20)
            // The attacker sends its worst uploads one after another, a list-merge upload then a
            // largest message, again and again, while the victim measures.
            let attack = Task {
                try await RawSyncClient.connect(port: server.port, maxFrameSize: maxMessage, timeout: .seconds(600)) { attacker in
                    let attackerId = try await Self.open(&attacker, attackerToken)
                    var uploadId: Int64 = 1
                    while !Task.isCancelled {
                        let kind = uploadId % 2 == 1 ? 1 : 2
                        let message = kind == 1
                            ? Self.listMergeAttack(uploadId, ids: taskIds, clientId: attackerId)
                            : Self.largestMessage(uploadId, bytes: maxMessage - (64 << 10), clientId: attackerId)
                        let text = SyncCoding.encode(message)
                        let start = ContinuousClock.now
                        try await attacker.send(text: text)
                        progress.inFlight.store(kind, ordering: .sequentiallyConsistent)
                        progress.sent.add(1, ordering: .sequentiallyConsistent)
                        let frames = try await attacker.collect {
                            if case .ack(let ack) = $0 { ack.uploadId == uploadId } else { false }
                        }
                        progress.inFlight.store(0, ordering: .sequentiallyConsistent)
                        progress.report.withLock { $0.append("attacker upload \(uploadId) (\(Self.kinds[kind] ?? ""), "
                            + "\(text.utf8.count) bytes): \(Self.ms(ContinuousClock.now - start)) to its ack, errors "
                            + "\(RawSyncClient.errors(frames).map(\.code))") }
                        uploadId += 1
                    }
                }
            }
            var underAttack = [Int: [Duration]]()
            var next: Int64 = 26
            // Samples sent while an attack upload is being handled (sent, not yet acknowledged),
            // until both kinds were acknowledged once and 15 samples of each were taken (or 4 min).
            let deadline = ContinuousClock.now + .seconds(240)
            while (underAttack[1]?.count ?? 0) < 15 || (underAttack[2]?.count ?? 0) < 15
                || progress.sent.load(ordering: .sequentiallyConsistent) < 3, ContinuousClock.now < deadline {
                let during = progress.inFlight.load(ordering: .sequentiallyConsistent)
                let sample = try await Self.latencies(&victim, clientId: victimId, from: next, count: 1)
                next += 1
                if during != 0 { underAttack[during, default: []] += sample }
            }
            attack.cancel()
            return (baseline, underAttack)
        }
        let (baseMedian, baseP90) = Self.summary(baseline)
        var lines = progress.report.withLock { $0 } + [
            "victim baseline: median \(Self.ms(baseMedian)), p90 \(Self.ms(baseP90)), max \(Self.ms(baseline.max() ?? .zero)) "
                + "(\(baseline.count) uploads)",
        ]
        for (kind, samples) in underAttack.sorted(by: { $0.key < $1.key }) {
            let (median, p90) = Self.summary(samples)
            lines.append("victim during \(Self.kinds[kind] ?? ""): median \(Self.ms(median)), p90 \(Self.ms(p90)), max "
                + "\(Self.ms(samples.max() ?? .zero)) (\(samples.count) uploads)")
        }
        if ProcessInfo.processInfo.environment["TRELLIS_ISOLATION_REPORT"] == "1" {
            print(lines.joined(separator: "\n"))
        }
        for kind in [1, 2] {
            let samples = underAttack[kind] ?? []
            #expect(samples.count >= 15, "\(lines)")
            // The typical upload of the other user is delayed by less than 100 ms (median), and
            // none waits for the attacker's merge (the slowest within a second of the baseline's
            // slowest; before, one waited the whole merge: 84 s). The 90th percentile is reported,
            // not asserted: the attacker's writes, linear in its upload, still run under the history
            // lock, and it shares the machine's two cores (docs/SYNC.md, "Limits").
            #expect(Self.summary(samples).median < baseMedian + Self.allowedDelay, "\(lines)")
            #expect((samples.max() ?? .zero) < (baseline.max() ?? .zero) + .seconds(1), "\(lines)")
        }
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
}
