import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TrellisSyncProtocol
import WSClient

// `SyncBench --load` (issue 39, load test): many sessions on one server, each its own anonymous
// user subscribed to one group of pings (`round == group`), some of them also writing pings at
// a rate. With `--owner-only`, the server reads an owner-only rule (`{"ownerId": "%%user.id"}`)
// and every session subscribes to all pings (`TRUEPREDICATE`): a group is then one user's
// sessions (one anonymous user per group), and a writer's pings reach its user's sessions. Reports upload -> download latency at every receiving session (p50, p99), pings and
// deliveries per second, and the server's resident memory before, with the sessions idle, and
// under load. Raw protocol sessions (no Realm file per client), so one process can hold
// thousands; bounded in count and time, loopback only (the server is started here).

struct LoadOptions {
    var clients = 1_000
    var writers = 50
    var perSecond = 1.0
    var seconds = 20
    var groups = 20
    /// An owner-only rule and `TRUEPREDICATE` subscriptions instead of `round == group` and no rules.
    var ownerOnly = false

    static let maxClients = 5_000
    static let maxSeconds = 300
}

/// What the sessions saw, shared by all of them.
final class LoadCounters: Sendable {
    let sentAt = Mutex<[String: UInt64]>([:])
    let latencies = Mutex<[Double]>([])
    let ready = Atomic<Int>(0)
    let deliveries = Atomic<Int>(0)
    let pings = Atomic<Int>(0)
    let failures = Mutex<[String]>([])
}

/// The server's resident set size in MB (from /proc).
func residentMegabytes(of pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return .nan }
    return kilobytes / 1024
}

/// The rules of `--owner-only`: a user reads and writes only the pings it owns.
let ownerOnlyRules = #"""
    {"rules": [{"collection": "BenchPing", "roles": [{"name": "owner", "apply_when": {},
      "document_filters": {"read": {"ownerId": "%%user.id"}, "write": {"ownerId": "%%user.id"}},
      "read": true, "write": true}]}],
     "default_rule": {"roles": [{"name": "all", "apply_when": {},
       "document_filters": {"read": true, "write": true}, "read": true, "write": true}]}}
    """#

/// The server's `trellis_sync_fanout_wakes_total` (sessions woken for new history), nil when
/// its /metrics has none (an older server).
func fanOutWakes(_ baseURL: String) async -> Int? {
    guard let url = URL(string: "\(baseURL)/metrics"),
          let (data, _) = try? await URLSession.shared.data(from: url) else { return nil }
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n")
        .first { $0.hasPrefix("trellis_sync_fanout_wakes_total ") }
    return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
}

/// A new anonymous user's access token and user id.
func anonymousLogin(_ baseURL: String) async throws -> (token: String, userId: String) {
    guard let url = URL(string: "\(baseURL)/api/client/v2.0/app/trellis/auth/providers/anon-user/login") else {
        throw BenchError("bad server URL \(baseURL)")
    }
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = Data("{}".utf8)
    request.timeoutInterval = 60
    let (data, _) = try await URLSession.shared.data(for: request)
    let reply = try JSONValue(jsonText: String(decoding: data, as: UTF8.self))
    guard let token = reply["access_token"]?.stringValue, let userId = reply["user_id"]?.stringValue else {
        throw BenchError("anonymous login failed: \(String(decoding: data, as: UTF8.self))")
    }
    return (token, userId)
}

/// One session: hello with its group's subscription, then it reads downloads until `until`,
/// recording the latency of each ping it receives; a writer also uploads a ping to a random
/// group every 1/rate seconds (`--owner-only`: a ping its user owns).
func runLoadSession(index: Int, port: Int, login: (token: String, userId: String), options: LoadOptions, writes: Bool,
                    until: UInt64, counters: LoadCounters) async throws {
    let group = index % options.groups
    let token = login.token
    let subscriptions = SubscriptionSet(version: 1, subscriptions: [
        .init(name: "group", className: "BenchPing", query: options.ownerOnly ? "TRUEPREDICATE" : "round == \(group)"),
    ])
    let hello = SyncMessage.hello(.init(appId: "trellis", accessToken: token, clientId: "load-\(index)-\(getpid())",
                                        schemaVersion: 0, schema: [:], lastServerVersion: 0,
                                        subscriptions: subscriptions))
    try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/api/client/v2.0/app/trellis/realm-sync",
                                      configuration: .init(maxFrameSize: 1 << 24),
                                      logger: Logger(label: "load")) { inbound, outbound, _ in
        try await outbound.write(.text(SyncCoding.encode(hello)))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                var isReady = false
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message, case .download(let download) = try? SyncCoding.decode(text)
                    else { continue }
                    let at = now()
                    if !isReady, download.completesSubscriptionVersion == 1 {
                        isReady = true
                        counters.ready.add(1, ordering: .relaxed)
                        continue
                    }
                    // Changes the subscription does not select come as removals (no document): not deliveries.
                    for change in download.changes where change.document != nil {
                        guard let id = change.primaryKey["$oid"]?.stringValue,
                              let sent = counters.sentAt.withLock({ $0[id] }) else { continue }
                        counters.latencies.withLock { $0.append(Double(at &- sent) / 1e6) }
                        counters.deliveries.add(1, ordering: .relaxed)
                    }
                    if now() >= until { break }
                }
            }
            if writes {
                tasks.addTask {
                    while counters.ready.load(ordering: .relaxed) < options.clients, now() < until {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    var uploadId: Int64 = 1
                    let stop = now() + UInt64(options.seconds) * 1_000_000_000
                    let interval = Duration.seconds(1 / options.perSecond)
                    // Writers start spread over one interval, so the pings do not come in bursts.
                    try await Task.sleep(for: interval * Double.random(in: 0..<1))
                    while now() < stop {
                        let id = ObjectIdText.random()
                        let key = JSONValue.object(["$oid": .string(id)])
                        let round = Int64.random(in: 0..<Int64(options.groups))
                        counters.sentAt.withLock { $0[id] = now() }
                        try await outbound.write(.text(SyncCoding.encode(.upload(.init(uploadId: uploadId, changes: [
                            SyncObjectChange(className: "BenchPing", primaryKey: key, kind: .insert,
                                             timestamp: String(format: "%016llu-00000-load%d", now() / 1_000_000, index),
                                             fields: [.set(name: "_id", value: key), .set(name: "round", value: .int(round)),
                                                      .set(name: "ownerId", value: .string(login.userId))]),
                        ])))))
                        counters.pings.add(1, ordering: .relaxed)
                        uploadId += 1
                        try await Task.sleep(for: interval)
                    }
                }
            }
            try await tasks.next()
            tasks.cancelAll()
        }
        try? await outbound.close(.normalClosure, reason: nil)
    }
}

/// 24 lowercase hexadecimal digits, an ObjectId's text.
enum ObjectIdText {
    static func random() -> String {
        (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

struct LoadResult {
    var clients: Int
    var writers: Int
    var seconds: Int
    var rssStartMb: Double
    var rssIdleMb: Double
    var rssLoadMb: Double
    var latencies: [Double]
    var pings: Int
    var deliveries: Int
    var connectSeconds: Double
    var failures: [String]
    /// Sessions the server's fan-out woke while the writers wrote (nil: the server does not count them).
    var fanOutWakes: Int?
}

/// Runs the load against a new server on `database`.
func runLoad(_ options: LoadOptions, executable: String, database: String, schema: URL) async throws -> LoadResult {
    var rules: URL?
    if options.ownerOnly {
        let file = schema.deletingLastPathComponent().appendingPathComponent("rules.json")
        try ownerOnlyRules.write(to: file, atomically: true, encoding: .utf8)
        rules = file
    }
    let server = try ServerProcess(executable: executable, database: database, schema: schema, rules: rules,
                                   extraArguments: ["--history-poll-interval", "1000"])
    defer { server.stop() }
    try await Task.sleep(for: .seconds(1))
    let rssStart = residentMegabytes(of: server.pid)
    let counters = LoadCounters()
    let connectStart = now()
    // Owner-only: one user per group, its sessions share its login.
    var logins = [(token: String, userId: String)]()
    for _ in 0..<(options.ownerOnly ? options.groups : options.clients) {
        logins.append(try await anonymousLogin(server.baseURL))
    }
    let runFor = UInt64(options.seconds) * 1_000_000_000
    let deadline = now() + 120_000_000_000 + runFor
    let port = server.port
    return try await withThrowingTaskGroup(of: Void.self) { sessions in
        for index in 0..<options.clients {
            let login = logins[options.ownerOnly ? index % options.groups : index]
            sessions.addTask {
                do {
                    try await runLoadSession(index: index, port: port, login: login, options: options,
                                             writes: index < options.writers, until: deadline, counters: counters)
                } catch {
                    if !Task.isCancelled { counters.failures.withLock { $0.append("session \(index): \(error)") } }
                }
            }
            // Connect in steps, not all at once (the listen backlog and the logins' database).
            if index % 50 == 49 {
                while counters.ready.load(ordering: .relaxed) < index - 100, now() < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        while counters.ready.load(ordering: .relaxed) < options.clients, now() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let connectSeconds = seconds(connectStart, now())
        try await Task.sleep(for: .seconds(2))
        let rssIdle = residentMegabytes(of: server.pid)
        let wakesBefore = await fanOutWakes(server.baseURL)
        // The writers started writing when every session was ready (they wait for it themselves).
        try await Task.sleep(for: .nanoseconds(Int64(runFor)))
        let rssLoad = residentMegabytes(of: server.pid)
        let wakesAfter = await fanOutWakes(server.baseURL)
        try await Task.sleep(for: .seconds(1))
        sessions.cancelAll()
        return LoadResult(clients: options.clients, writers: options.writers, seconds: options.seconds,
                          rssStartMb: rssStart, rssIdleMb: rssIdle, rssLoadMb: rssLoad,
                          latencies: counters.latencies.withLock { $0 }, pings: counters.pings.load(ordering: .relaxed),
                          deliveries: counters.deliveries.load(ordering: .relaxed), connectSeconds: connectSeconds,
                          failures: counters.failures.withLock { $0 },
                          fanOutWakes: wakesBefore.flatMap { before in wakesAfter.map { $0 - before } })
    }
}
