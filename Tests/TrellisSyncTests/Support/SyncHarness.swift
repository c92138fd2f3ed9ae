import Foundation
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisTestSupport

/// The PostgreSQL of the test run: `TRELLIS_SYNC_POSTGRES_URL` if set (Scripts/test.sh starts
/// one), else one started here with Scripts/postgres.sh and stopped when the process exits.
enum PostgresFixture {
    /// Started on first use (not in a `static let`: Foundation's Process does not finish
    /// waiting inside a lazy global's initializer on Linux).
    static var url: String {
        if let url = ProcessInfo.processInfo.environment["TRELLIS_SYNC_POSTGRES_URL"], !url.isEmpty { return url }
        return startedURL.withLock { url in
            if let url { return url }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-sync-pg-\(getpid())")
            let output = (try? runTool("/bin/bash", [scriptPath, "start", directory.path])) ?? ""
            startedDirectory.withLock { $0 = directory.path }
            atexit {
                if let path = PostgresFixture.startedDirectory.withLock({ $0 }) {
                    _ = try? runTool("/bin/bash", [PostgresFixture.scriptPath, "stop", path])
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
            let found = output.split(separator: "\n").last.map(String.init) ?? ""
            url = found
            return found
        }
    }

    static let startedURL = Mutex<String?>(nil)
    static let startedDirectory = Mutex<String?>(nil)
    static let counter = Atomic<Int>(0)

    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts/postgres.sh").path
    }

    /// A new empty database; its URL.
    static func makeDatabase() throws -> String {
        let base = url
        #expect(!base.isEmpty, "PostgreSQL did not start (Scripts/postgres.sh)")
        let name = "sync_\(getpid())_\(counter.wrappingAdd(1, ordering: .relaxed).newValue)"
        try psql(base, "CREATE DATABASE \(name)")
        guard let slash = base.lastIndex(of: "/") else { throw ToolError(description: "bad URL \(base)") }
        return String(base[...slash]) + name
    }

    /// Runs SQL with psql; its output (tuples only).
    @discardableResult
    static func psql(_ url: String, _ sql: String) throws -> String {
        try runTool("/usr/bin/env", ["psql", url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
    }
}

struct ToolError: Error, CustomStringConvertible {
    let description: String
}

/// Runs a tool to completion; its standard output. With posix_spawn and waitpid rather than
/// Foundation's Process, whose wait on Linux never ends when the tool leaves a daemon behind
/// (pg_ctl's PostgreSQL).
@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outPath = folder.appendingPathComponent("out").path, errPath = folder.appendingPathComponent("err").path
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard spawned == 0 else { throw ToolError(description: "cannot run \(path): error \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    guard status == 0 else {
        let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        throw ToolError(description: "\(arguments.joined(separator: " ")) failed (status \(status)): \(errors)")
    }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Starts a program in the background, output to files; its pid.
func spawnBackground(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard spawned == 0 else { throw ToolError(description: "cannot run \(path): error \(spawned)") }
    return pid
}

/// A `trellis-sync` server process on a free port (or the port given).
final class ServerProcess: @unchecked Sendable {
    let pid: pid_t
    let port: Int
    let logFolder: URL
    private var exited = false
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The server built beside the tests, or `TRELLIS_SYNC_SERVER_BINARY` (a measurement of
    /// another build, such as a release build or an older version, with the same tests).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["TRELLIS_SYNC_SERVER_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("trellis-sync")
    }

    init(database: String, schema: URL, arguments: [String] = [], port: Int = 0) throws {
        logFolder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: logFolder, withIntermediateDirectories: true)
        let out = logFolder.appendingPathComponent("out").path, err = logFolder.appendingPathComponent("err").path
        // Permissions and login providers are required flags: tests without rules of their own
        // run with --allow-all and both providers.
        var defaults = ["--jwt-key", testJWTKey, "--parent-pid", String(getpid())]
        if !arguments.contains("--rules") && !arguments.contains("--allow-all") { defaults.append("--allow-all") }
        if !arguments.contains("--auth") { defaults += ["--auth", "anonymous,jwt"] }
        pid = try spawnBackground(Self.executable.path,
                                  ["--postgres", database, "--schema", schema.path, "--port", String(port)]
                                      + defaults + arguments,
                                  stdout: out, stderr: err)
        // The first line says where it listens.
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while Date() < deadline {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let portText = line.split(separator: ":").last {
                found = Int(portText)
                break
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exited = true; break }
            usleep(20_000)
        }
        guard let found else {
            let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            if !exited { Foundation.kill(pid, SIGKILL); waitpid(pid, nil, 0) }
            exited = true
            let sockets = port == 0 ? "" : ((try? runTool("/usr/bin/env", ["ss", "-tanp"])) ?? "")
                .split(separator: "\n").filter { $0.contains(":\(port) ") }.joined(separator: "\n")
            throw ToolError(description: "trellis-sync did not start against \(database): \(errors) \(sockets)")
        }
        self.port = found
    }

    /// The server's standard error so far (its log).
    var log: String { (try? String(contentsOfFile: logFolder.appendingPathComponent("err").path, encoding: .utf8)) ?? "" }

    /// Whether the process has ended (reaped here).
    var hasExited: Bool {
        if exited { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return exited
    }

    func kill(_ signal: Int32 = SIGTERM) {
        guard !exited else { return }
        Foundation.kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        exited = true
    }

    deinit {
        kill(SIGKILL)
        try? FileManager.default.removeItem(at: logFolder)
    }
}

let testJWTKey = "trellis-sync-test-key-0123456789abcdef"

/// A schema file for the models (App Services JSON schemas, as `trellis schema export` writes).
func makeSchemaFile(_ types: [ObjectBase.Type] = syncModelTypes) throws -> URL {
    let schema = try AppServicesSchema(objectTypes: types)
    var documents = [String]()
    for name in schema.collectionClassNames {
        documents.append(String(decoding: try schema.jsonSchema(for: name), as: UTF8.self))
    }
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sync-schema-\(UUID().uuidString).json")
    try ("[" + documents.joined(separator: ",") + "]").write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// One client device: a user, a synced file, and a Realm confined to its own queue.
final class Device: @unchecked Sendable {
    let app: App
    let user: User
    let configuration: Realm.Configuration
    let queue: DispatchQueue
    private var realm: Realm?
    let directory: URL
    private let ownsDirectory: Bool

    convenience init(server: ServerProcess, credentials: Credentials = .anonymous,
                     types: [ObjectBase.Type] = syncModelTypes, schemaVersion: UInt64 = 0, file: URL? = nil,
                     clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
                     subscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = Device.allSubscriptions,
                     encryptionKey: Data? = nil) async throws {
        try await self.init(baseURL: server.baseURL, credentials: credentials, types: types,
                            schemaVersion: schemaVersion, file: file, clientResetMode: clientResetMode,
                            subscriptions: subscriptions, encryptionKey: encryptionKey)
    }

    static let allSubscriptions: @Sendable (SyncSubscriptionSet) -> Void = { subs in
        subs.append(QuerySubscription<SyncDog>(name: "dogs"))
        subs.append(QuerySubscription<SyncPerson>(name: "people"))
        subs.append(QuerySubscription<SyncTask>(name: "tasks"))
    }

    convenience init(baseURL: String, credentials: Credentials = .anonymous, types: [ObjectBase.Type] = syncModelTypes,
                     schemaVersion: UInt64 = 0, file: URL? = nil,
                     clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
                     subscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = Device.allSubscriptions,
                     encryptionKey: Data? = nil) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let app = App(id: "trellis", configuration: AppConfiguration(baseURL: baseURL, rootDirectory: directory))
        let user = try await app.login(credentials: credentials)
        self.init(app: app, user: user, directory: directory, ownsDirectory: true, types: types,
                  schemaVersion: schemaVersion, file: file ?? directory.appendingPathComponent("device.realm"),
                  clientResetMode: clientResetMode, subscriptions: subscriptions, encryptionKey: encryptionKey)
    }

    /// A device of an app and user made elsewhere (a relaunch: the app read its users from
    /// disk); `directory` is removed at the end only when `ownsDirectory`. `encryptionKey`
    /// encrypts the synced file (the TrellisStorage build).
    init(app: App, user: User, directory: URL, ownsDirectory: Bool, types: [ObjectBase.Type] = syncModelTypes,
         schemaVersion: UInt64 = 0, file: URL? = nil, clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
         subscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = Device.allSubscriptions,
         encryptionKey: Data? = nil) {
        self.app = app
        self.user = user
        self.directory = directory
        self.ownsDirectory = ownsDirectory
        var configuration = user.flexibleSyncConfiguration(clientResetMode: clientResetMode,
                                                           initialSubscriptions: subscriptions)
        if let file { configuration.fileURL = file }
        configuration.objectTypes = types
        configuration.schemaVersion = schemaVersion
        configuration.syncOnCommit = false
        configuration.encryptionKey = encryptionKey
        self.configuration = configuration
        queue = DispatchQueue(label: "device")
    }

    /// Runs `body` with the device's Realm (refreshed) on its queue.
    func run<T>(_ body: (Realm) throws -> T) throws -> T {
        try queue.sync {
            if realm == nil { realm = try Realm(configuration: configuration, queue: queue) }
            guard let realm else { throw ToolError(description: "no realm") }
            realm.refresh()
            return try body(realm)
        }
    }

    func write(_ body: @escaping (Realm) throws -> Void) throws {
        try run { realm in try realm.write { try body(realm) } }
    }

    var session: SyncSession {
        get throws { try run { $0.syncSession }.unwrapped("syncSession") }
    }

    /// Waits for upload then download, bounded in time.
    func sync(timeout: Duration = .seconds(30)) async throws {
        let session = try self.session
        try await withTimeout(timeout) {
            try await session.wait(for: .upload)
            try await session.wait(for: .download)
        }
    }

    func close() async {
        queue.sync { realm = nil }
        try? await user.logOut()
    }

    /// Closes the Realm without logging out, its session suspended for good (the app quits:
    /// in this process its engine stays, so it must not connect again).
    func quit() {
        try? session.suspend()
        queue.sync { realm = nil }
    }

    deinit { if ownsDirectory { try? FileManager.default.removeItem(at: directory) } }
}

extension Optional {
    func unwrapped(_ what: String) throws -> Wrapped {
        guard let self else { throw ToolError(description: "\(what) is nil") }
        return self
    }
}

/// Runs `body`, failing with a timeout error when it takes longer than `limit` (even when
/// `body` waits on something that ignores cancellation: it is left behind, not awaited).
func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = Mutex<CheckedContinuation<T, Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        outcome.withLock { $0 = continuation }
        let finish: @Sendable (Result<T, Error>) -> Void = { result in
            outcome.withLock { pending in
                pending?.resume(with: result)
                pending = nil
            }
        }
        let isPending: @Sendable () -> Bool = { outcome.withLock { $0 != nil } }
        let work = Task { finish(await Result(catching: body)) }
        Task {
            // Running time (TrellisTestSupport): a whole-process stall under load is not charged.
            // Ends with the work, so no timer outlives its call.
            var patience = RunningTime(limit)
            while isPending(), !patience.isUsedUp() {
                try? await Task.sleep(for: RunningTime.longestStep)
            }
            work.cancel()
            finish(.failure(ToolError(description: "timed out after \(limit)")))
        }
    }
}

extension Result where Failure == Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Polls `condition` until it holds or `limit` of running time (``RunningTime``) passes.
func eventually(_ limit: Duration = .seconds(20), interval: Duration = .milliseconds(25),
                _ condition: () throws -> Bool) async throws -> Bool {
    var patience = RunningTime(limit)
    while !patience.isUsedUp() {
        if try condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try condition()
}

/// An app of its own (a new users folder in the temporary directory): each test's logins are
/// its own, as on a new device.
func testApp(_ baseURL: String) -> App {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("sync-app-\(UUID().uuidString)")
    return App(id: "trellis", configuration: AppConfiguration(baseURL: baseURL, rootDirectory: root))
}

/// A database, a schema file and one server: what most tests start from.
struct SyncFixture {
    let database: String
    let schema: URL
    let server: ServerProcess

    init(types: [ObjectBase.Type] = syncModelTypes, serverArguments: [String] = []) throws {
        database = try PostgresFixture.makeDatabase()
        schema = try makeSchemaFile(types)
        server = try ServerProcess(database: database, schema: schema, arguments: serverArguments)
    }
}
