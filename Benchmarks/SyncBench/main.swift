import Foundation
import Synchronization
import Trellis
import TrellisSync

// SyncBench (issue 21): Trellis Sync's throughput and latency on loopback, against a real
// PostgreSQL and a real trellis-sync process. Run it with Scripts/bench-sync.sh, which starts
// the PostgreSQL; docs/BENCHMARKS.md ("Sync") has the figures.
//
//   SyncBench --postgres URL [--server PATH] [--objects N] [--rounds R] [--repetitions K]
//             [--batch B] [--round-interval MS] [--json] [--smoke]
//
// Each repetition: a new database and server; client A commits N objects offline (half dogs,
// half people with a link, a list of links, an embedded object and a list of embedded objects)
// and the upload is timed from reconnecting to the server's acknowledgement; a new client B
// then opens an empty file with Realm.asyncOpen, timed until it is handed over with the N
// objects. After the last repetition, R round trips: A commits one object, B's notification
// block sees it.

struct Options {
    var postgres = ""
    var server = ""
    var objects = 10_000
    var rounds = 200
    var warmUp = 10
    var repetitions = 1
    var batch = 1_000
    /// Round trips start at least this far apart (10 commits a second: half the server's
    /// per-connection message rate, so the rate limit never holds an upload back).
    var roundInterval = 100
    var json = false
    var smoke = false
    /// `--load`: the load test instead (LoadTest.swift).
    var load: LoadOptions?

    static let usage = """
        usage: SyncBench --postgres URL [--server PATH] [--objects N] [--rounds R] [--repetitions K]
                         [--batch B] [--round-interval MS] [--json] [--smoke]
          --postgres URL     a PostgreSQL this user may create databases on (Scripts/bench-sync.sh starts one)
          --server PATH      the trellis-sync executable (default: next to SyncBench)
          --objects N        objects uploaded and downloaded per repetition (default 10000)
          --rounds R         commit -> notification round trips (default 200, after 10 not counted)
          --repetitions K    upload/download repetitions, each on a new database and server (default 1)
          --batch B          objects per local write transaction (default 1000)
          --round-interval MS  round trips start at least MS apart (default 100: 10 commits a second, under the
                             server's 100 messages a second per connection, which it enforces by waiting)
          --json             one JSON object instead of the table
          --downloads-through-create  the clients apply downloads through Realm.create (before session 27)
          --mirror-written-from-documents  the clients write each downloaded document's mirror entry
                             from the parsed document (before session 36), not from the frame's text
          --smoke            tiny sizes (200 objects, 20 rounds, 1 repetition): checks it runs
        SyncBench --load --postgres URL [--clients N] [--writers W] [--rate R] [--seconds S] [--owner-only] [--json]
          N sessions (default 1000, at most 5000), each its own anonymous user subscribed to one of 20
          groups of pings; W of them (default 50) upload a ping to a random group R times a second (1)
          for S seconds (20, at most 300). Reports upload -> download latency at the receiving
          sessions, pings and deliveries a second, the server's memory idle and under load, and how
          many sessions its fan-out woke. --owner-only: an owner-only rule ({"ownerId": "%%user.id"}),
          every session subscribed to all pings, 20 users of N/20 sessions each; a ping reaches its
          writer's user's sessions.
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(name) needs a value\n\(usage)") }
            return next
        }
        func number(_ name: String) throws -> Int {
            let text = try value(name)
            guard let number = Int(text), number > 0 else { throw BenchError("\(name) takes a positive number, not '\(text)'") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--postgres": options.postgres = try value(argument)
            case "--server": options.server = try value(argument)
            case "--objects": options.objects = try number(argument)
            case "--rounds": options.rounds = try number(argument)
            case "--repetitions": options.repetitions = try number(argument)
            case "--batch": options.batch = try number(argument)
            case "--round-interval": options.roundInterval = try number(argument)
            case "--json": options.json = true
            case "--downloads-through-create":
                // The client's apply path before session 27, to measure against (docs/BENCHMARKS.md).
                DocumentRowWriter.measuresCreateInstead.store(true, ordering: .relaxed)
            case "--mirror-written-from-documents":
                // The mirror's writing before session 36, to measure against (docs/BENCHMARKS.md).
                SyncDownloadMeasurement.writesMirrorFromDocuments.store(true, ordering: .relaxed)
            case "--load": options.load = options.load ?? LoadOptions()
            case "--clients":
                options.load = options.load ?? LoadOptions()
                options.load?.clients = min(try number(argument), LoadOptions.maxClients)
            case "--writers":
                options.load = options.load ?? LoadOptions()
                options.load?.writers = try number(argument)
            case "--rate":
                options.load = options.load ?? LoadOptions()
                options.load?.perSecond = Double(try number(argument))
            case "--owner-only":
                options.load = options.load ?? LoadOptions()
                options.load?.ownerOnly = true
            case "--seconds":
                options.load = options.load ?? LoadOptions()
                options.load?.seconds = min(try number(argument), LoadOptions.maxSeconds)
            case "--smoke":
                options.smoke = true
                options.objects = 200
                options.rounds = 20
                options.warmUp = 2
                options.repetitions = 1
            case "--help", "-h":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
        }
        guard !options.postgres.isEmpty else { throw BenchError("--postgres URL is required\n\(usage)") }
        if options.server.isEmpty {
            options.server = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("trellis-sync").path
        }
        return options
    }
}

func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

func run(_ options: Options) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let schema = folder.appendingPathComponent("schema.json")
    try writeSchema(to: schema)

    var uploads = [UploadResult]()
    var downloads = [Double]()
    var latencies = [Double]()
    var slowed = false
    for repetition in 1...options.repetitions {
        let database = try makeDatabase(options.postgres, name: "syncbench_\(getpid())_\(repetition)")
        let server = try ServerProcess(executable: options.server, database: database, schema: schema)
        defer { server.stop() }
        let files = folder.appendingPathComponent("run\(repetition)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)

        let a = try await BenchClient("A", baseURL: server.baseURL, folder: files)
        let upload = try await measureUpload(a, count: options.objects, batch: options.batch, serverPid: server.pid)
        let stored = try runTool("/usr/bin/env", ["psql", database, "-At", "-c",
            "SELECT (SELECT count(*) FROM \"BenchDog\") + (SELECT count(*) FROM \"BenchPerson\")"])
        guard Int(stored) == upload.objects else {
            throw BenchError("after the upload PostgreSQL holds \(stored) objects, not \(upload.objects)")
        }
        uploads.append(upload)
        log("run \(repetition): local write " + String(format: "%.2f s, upload %.2f s (%.0f objects/s)",
                                                          upload.localWriteSeconds, upload.uploadSeconds,
                                                          Double(upload.objects) / upload.uploadSeconds))

        let b = try await BenchClient("B", baseURL: server.baseURL, folder: files)
        let download = try await measureDownload(b, expected: upload.objects)
        downloads.append(download)
        log("run \(repetition): download " + String(format: "%.2f s (%.0f objects/s)", download,
                                                        Double(upload.objects) / download))

        if repetition == options.repetitions {
            latencies = try await measureLatency(writer: a, reader: b, rounds: options.rounds, warmUp: options.warmUp,
                                                 interval: .milliseconds(options.roundInterval))
        }
        if server.serverLog.contains("slowing a sync connection") {
            slowed = true
            log("run \(repetition): the server slowed a connection over its message rate: its waits are in the figures")
        }
        await a.close()
        await b.close()
    }
    report(options, uploads: uploads, downloads: downloads, latencies: latencies, slowed: slowed)
}

func runLoadTest(_ options: Options, _ load: LoadOptions) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("syncload-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let schema = folder.appendingPathComponent("schema.json")
    try writeSchema(to: schema)
    let database = try makeDatabase(options.postgres, name: "syncload_\(getpid())")
    var load = load
    load.writers = min(load.writers, load.clients)
    let result = try await runLoad(load, executable: options.server, database: database, schema: schema)
    let idleKbPerClient = (result.rssIdleMb - result.rssStartMb) * 1024 / Double(result.clients)
    let pingsPerSecond = Double(result.pings) / Double(result.seconds)
    let deliveriesPerSecond = Double(result.deliveries) / Double(result.seconds)
    for failure in result.failures.prefix(5) { log("failure: \(failure)") }
    if options.json {
        var object: [String: Any] = [
            "clients": result.clients, "writers": result.writers, "seconds": result.seconds,
            "latencyP50Ms": percentile(result.latencies, 0.5), "latencyP99Ms": percentile(result.latencies, 0.99),
            "pingsPerSecond": pingsPerSecond, "deliveriesPerSecond": deliveriesPerSecond,
            "serverRssMbStart": result.rssStartMb, "serverRssMbIdle": result.rssIdleMb, "serverRssMbLoad": result.rssLoadMb,
            "idleKbPerClient": idleKbPerClient, "connectSeconds": result.connectSeconds, "failedSessions": result.failures.count,
            "ownerOnly": load.ownerOnly,
        ]
        if let wakes = result.fanOutWakes {
            object["fanOutWakes"] = wakes
            object["fanOutWakesPerPing"] = result.pings > 0 ? Double(wakes) / Double(result.pings) : 0
        }
        if result.clients == 1_000 { object["serverRssMbAt1000Clients"] = result.rssIdleMb }
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
        return
    }
    let f1 = { (value: Double) in String(format: "%.1f", value) }
    let shape = load.ownerOnly ? "20 users, owner-only rule, TRUEPREDICATE subscriptions" : "own anonymous users, 20 groups"
    print("Trellis Sync load on loopback: \(result.clients) sessions (\(shape)), \(result.writers) "
        + "writing \(load.perSecond)/s for \(result.seconds) s; \(result.failures.count) sessions failed")
    print("| measure | value |")
    print("|---|---:|")
    print("| connect and bootstrap all sessions | \(f1(result.connectSeconds)) s |")
    print("| upload -> download at each receiving session | p50 \(f1(percentile(result.latencies, 0.5))) ms, "
        + "p99 \(f1(percentile(result.latencies, 0.99))) ms (\(result.latencies.count) deliveries) |")
    print("| pings uploaded / deliveries | \(f1(pingsPerSecond))/s / \(f1(deliveriesPerSecond))/s |")
    print("| server memory (RSS): started / \(result.clients) idle / under load | \(f1(result.rssStartMb)) / "
        + "\(f1(result.rssIdleMb)) / \(f1(result.rssLoadMb)) MB |")
    print("| idle memory per session | \(f1(idleKbPerClient)) KB |")
    if let wakes = result.fanOutWakes {
        print("| sessions woken by the fan-out | \(wakes) (\(f1(Double(wakes) / Double(max(result.pings, 1)))) per ping) |")
    }
}

func report(_ options: Options, uploads: [UploadResult], downloads: [Double], latencies: [Double], slowed: Bool) {
    let uploadRates = uploads.map { Double($0.objects) / $0.uploadSeconds }
    let downloadRates = downloads.map { Double(options.objects) / $0 }
    let median = { (values: [Double]) in percentile(values, 0.5) }
    if options.json {
        let object: [String: Any] = [
            "objects": options.objects, "repetitions": options.repetitions, "rounds": latencies.count,
            "uploadObjectsPerSecond": uploadRates.map { $0.rounded() },
            "downloadObjectsPerSecond": downloadRates.map { $0.rounded() },
            // CPU per uploaded object (until acknowledged): steadier than the rate on a shared machine.
            "uploadServerCpuMicrosPerObject": uploads.compactMap { $0.serverMicrosPerObject.map { $0.rounded() } },
            "uploadPostgresCpuMicrosPerObject": uploads.compactMap { $0.postgresMicrosPerObject.map { $0.rounded() } },
            "latencyMs": ["median": median(latencies), "p95": percentile(latencies, 0.95),
                          "p99": percentile(latencies, 0.99), "min": latencies.min() ?? 0, "max": latencies.max() ?? 0],
            // Issue 39's keys (medians over the repetitions).
            "latencyP50Ms": median(latencies), "latencyP99Ms": percentile(latencies, 0.99),
            "roundIntervalMs": options.roundInterval, "serverSlowedAConnection": slowed,
        ]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
        return
    }
    print("Trellis Sync on loopback: \(options.objects) objects (\(options.objects / 2) dogs, \(options.objects / 2) people) "
        + "per repetition, \(options.repetitions) repetition(s), \(latencies.count) round trips "
        + "\(options.roundInterval) ms apart" + (slowed ? " (the server slowed a connection over its message rate)" : ""))
    print("| measure | median | runs |")
    print("|---|---:|---|")
    let f0 = { (value: Double) in String(format: "%.0f", value) }
    let f1 = { (value: Double) in String(format: "%.1f", value) }
    let list = { (values: [Double]) in values.map(f0).joined(separator: ", ") }
    let writeRates = uploads.map { Double($0.objects) / $0.localWriteSeconds }
    print("| local write (offline, \(options.batch) objects per transaction), objects/s | \(f0(median(writeRates))) | "
        + "\(list(writeRates)) |")
    print("| upload until acknowledged, objects/s | \(f0(median(uploadRates))) | \(list(uploadRates)) |")
    let serverCPU = uploads.compactMap(\.serverMicrosPerObject), postgresCPU = uploads.compactMap(\.postgresMicrosPerObject)
    if !serverCPU.isEmpty {
        print("| upload: server CPU per object, µs | \(f0(median(serverCPU))) | \(list(serverCPU)) |")
        print("| upload: PostgreSQL CPU per object, µs | \(f0(median(postgresCPU))) | \(list(postgresCPU)) |")
    }
    print("| initial download (asyncOpen), objects/s | \(f0(median(downloadRates))) | \(list(downloadRates)) |")
    print("| commit on A -> notification on B, ms | \(f1(median(latencies))) (p95 \(f1(percentile(latencies, 0.95))), "
        + "p99 \(f1(percentile(latencies, 0.99))), "
        + "min \(f1(latencies.min() ?? 0)), max \(f1(latencies.max() ?? 0))) | \(latencies.count) round trips |")
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    log("SyncBench: \(error)")
    exit(2)
}
// A stuck run (a server that never answers) ends the process rather than hanging CI.
let limit = options.smoke ? 300.0 : 3_600.0
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: limit)
    log("SyncBench: gave up after \(Int(limit)) s")
    exit(3)
}
do {
    if let load = options.load { try await runLoadTest(options, load) } else { try await run(options) }
} catch {
    log("SyncBench: error: \(error)")
    exit(1)
}
