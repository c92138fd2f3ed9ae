import Foundation
import Synchronization
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import PostgresNIO
import ServiceLifecycle
import Trellis
import TrellisSyncProtocol

// trellis-sync: the Trellis Sync server (docs/SYNC.md). Holds no state of its own: PostgreSQL
// is the system of record, so several processes can serve one database.

let options: ServerOptions
if CommandLine.arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(ServerOptions.usage)
    exit(0)
}
do {
    options = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("trellis-sync: \(error)\n".utf8))
    exit(2)
}

var logger = Logging.Logger(label: "trellis-sync")
logger.logLevel = ProcessInfo.processInfo.environment["TRELLIS_SYNC_LOG"].flatMap { Logging.Logger.Level(rawValue: $0) } ?? .notice

do {
    try await runServer(options, logger: logger)
} catch {
    FileHandle.standardError.write(Data("trellis-sync: error: \(error)\n".utf8))
    exit(1)
}

func runServer(_ options: ServerOptions, logger: Logging.Logger) async throws {
    let schema = try ServerSchema(contentsOf: options.schemaPath)
    let rules: SyncRules
    if let path = options.rulesPath {
        rules = try SyncRules(contentsOf: path)
        if let custom = rules.customUserData, schema.collections[custom.collection] == nil {
            throw OptionError("The rules' custom user data collection '\(custom.collection)' is not in the schema "
                + "(known: \(schema.collections.keys.sorted().joined(separator: ", "))): add it to --schema, or fix "
                + "collection_name in auth/custom_user_data.json.")
        }
        let unknown = rules.collections.keys.filter { schema.collections[$0] == nil }.sorted()
        if !unknown.isEmpty {
            logger.warning("the rules name collections that are not in the schema (ignored): \(unknown.joined(separator: ", "))")
        }
    } else {
        rules = .allowAll
        let warning = "--allow-all: no permissions, every user can read and write every document. Give --rules "
            + "PATH before real users connect."
        logger.warning("\(warning)")
        FileHandle.standardError.write(Data("trellis-sync: warning: \(warning)\n".utf8))
    }
    var tls: TLSConfiguration?
    if let certificate = options.tlsCertificatePath, let key = options.tlsKeyPath {
        tls = try ServerTLS.configuration(certificatePath: certificate, keyPath: key)
    }
    let url = try PostgresURL(options.postgresURL)
    let client = PostgresClient(configuration: try url.clientConfiguration(), backgroundLogger: logger)
    let store = PostgresStore(client: client, schema: schema, logger: logger, faults: options.faults)
    let tokens = TokenStore(client: client, logger: logger)
    let watch = HistoryWatch(pollInterval: .milliseconds(options.historyPollMilliseconds))
    let metrics = ServerMetrics()
    let stop = StopDeadline(logger: logger)
    let timeout = Duration.seconds(options.shutdownTimeoutSeconds)
    let shutdown = GracefulShutdown(timeout: timeout, stop: stop)

    // Taken before anything slow, so a parent that dies during the database setup is seen.
    let parentWatch = options.parentPid.map(ParentWatch.init(parent:))

    try await withThrowingTaskGroup(of: Void.self) { group in
        // However the server stops (a signal, its parent gone, an error), its tasks are then
        // cancelled and awaited: a wait that ignores the cancellation (PostgresNIO's, on a
        // PostgreSQL that stopped answering) must not keep the process alive.
        defer {
            stop.arm(after: timeout + .seconds(5),
                     reason: "the server stopped, but its tasks (PostgreSQL connections) did not end within \(timeout + .seconds(5))")
        }
        group.addTask { await client.run() }
        // PostgresNIO retries a refused connection quietly: give up with a clear error instead.
        let signingKey = try await withThrowingTaskGroup(of: String?.self) { setup in
            setup.addTask {
                try await store.prepare(schemaVersion: options.schemaVersion)
                try await tokens.prepare()
                return try await tokens.signingKey()
            }
            setup.addTask {
                // A SIGTERM or SIGINT during the setup stops it too.
                let limit = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < limit {
                    if let signal = shutdown.signalReceived {
                        throw OptionError("Stopped by signal \(signal) while preparing the database at \(url.described).")
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                throw OptionError("Could not prepare the database at \(url.described) within 30 s: is PostgreSQL "
                    + "running there, and may this user create tables?")
            }
            defer { setup.cancelAll() }
            return try await setup.next() ?? nil
        }
        guard let signingKey else { throw OptionError("The database setup ended without a signing key.") }
        let authenticator = await Authenticator(signingKey: signingKey, loginKey: options.jwtKey, appId: options.appId,
                                                accessLifetime: options.tokenLifetime,
                                                refreshLifetime: options.refreshTokenLifetime)
        let app = try makeApplication(options, tls: tls, logger: logger, store: store, rules: rules, tokens: tokens,
                                  authenticator: authenticator, watch: watch, metrics: metrics, shutdown: shutdown)
        // Reading what a large upload added is as heavy as the upload: off the cooperative pool too.
        group.addTask(executorPreference: SessionThreads.executor) { await watch.run(store: store) }
        if let retention = options.historyRetentionSeconds {
            group.addTask { await HistoryPruning(retention: .milliseconds(Int64(retention * 1000))).run(store: store) }
        }
        // SIGTERM/SIGINT: `shutdown` drains the sessions, then stops the service group.
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = timeout
        let services = ServiceGroup(configuration: configuration)
        group.addTask { try await services.run() }
        group.addTask { await shutdown.run(services: services, watch: watch, timeout: timeout, logger: logger) }
        if let parentWatch {
            group.addTask {
                try await parentWatch.waitUntilGone()
                logger.notice("the parent process \(parentWatch.parent) is gone: stopping")
                // The stop below is bounded too: a server whose starter is gone must not linger.
                stop.arm(after: timeout + .seconds(10), reason: "the stop after the parent process ended took too long")
            }
        }
        try await group.next()
        group.cancelAll()
    }
}

/// The HTTP and WebSocket routes: login, token refresh, and one sync session per WebSocket.
func makeApplication(_ options: ServerOptions, tls: TLSConfiguration?, logger: Logging.Logger, store: PostgresStore, rules: SyncRules,
                     tokens: TokenStore, authenticator: Authenticator, watch: HistoryWatch,
                     metrics: ServerMetrics, shutdown: GracefulShutdown) throws -> some ApplicationProtocol {
    let router = Router(context: BasicWebSocketRequestContext.self)
    LoginRoutes.add(to: router, authenticator: authenticator, tokens: tokens, options: options,
                    metadataFields: rules.jwtMetadataFields)
    OperationsRoutes.add(to: router, store: store, watch: watch, metrics: metrics, shutdown: shutdown)
    router.ws("/api/client/v2.0/app/:appId/realm-sync") { _, _ in
        // A draining server takes no new session: the client tries again (another server).
        shutdown.isDraining ? .dontUpgrade : .upgrade([:])
    } onUpgrade: { inbound, outbound, context in
        let id = UUID()
        let (events, continuation) = AsyncStream.makeStream(of: SessionEvent.self)
        watch.add(id, continuation)
        metrics.sessionOpened(id)
        let ending = SessionEnding()
        defer {
            watch.remove(id)
            metrics.sessionEnded(id)
            // Logged however the session ends (also when a reset ends the connection without an
            // error reaching the read loop): tests and operators see that it is gone.
            let reason = ending.reason.withLock { $0 }
            context.logger.notice("a sync session ended: \(reason)")
        }
        let pathAppId = context.requestContext.parameters.get("appId") ?? ""
        let logger = context.logger
        // The reading task and the session run on kernel threads of their own, off the
        // cooperative pool (``SessionThreads``): a session busy with a large message (unmasking
        // it, decoding it, merging it) holds one of those threads, not every session's.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask(executorPreference: SessionThreads.executor) {
                // However the connection ends (a close frame, or an error such as a reset), the
                // session loop below is told: it would otherwise wait for events forever, and
                // the server could not shut down.
                defer { continuation.yield(.closed) }
                do {
                    var isFirst = true
                    var rate = ConnectionRateLimit(messagesPerSecond: options.maxMessagesPerSecond,
                                                   bytesPerSecond: options.maxBytesPerSecond,
                                                   maxMessageBytes: options.maxMessageBytes)
                    var slowed = false
                    for try await message in inbound.messages(maxSize: options.maxMessageBytes) {
                        guard case .text(let text) = message else { continue }
                        let received = ContinuousClock.now
                        metrics.received(bytes: text.utf8.count)
                        // Before the hello's token is checked, nothing large is read or decoded.
                        if isFirst, text.utf8.count > SyncSessionHandler.maxHelloBytes {
                            let message = "closing a sync connection whose first message has \(text.utf8.count) "
                                + "bytes (a hello has at most \(SyncSessionHandler.maxHelloBytes))"
                            logger.notice("\(message)")
                            break
                        }
                        isFirst = false
                        // Over its rate, the connection waits here: nothing more is read from it.
                        let wait = rate.delay(forMessageOf: text.utf8.count, at: .now)
                        if wait > .zero {
                            if !slowed {
                                let message = "slowing a sync connection that sends more than "
                                    + "\(options.maxMessagesPerSecond) messages or \(options.maxBytesPerSecond) bytes "
                                    + "a second (--max-messages-per-second, --max-bytes-per-second)"
                                logger.notice("\(message)")
                                slowed = true
                            }
                            try await Task.sleep(for: wait)
                        }
                        continuation.yield(.frame(text, received: received))
                    }
                    ending.reason.withLock { $0 = "the connection was closed" }
                } catch is CancellationError {
                } catch {
                    ending.reason.withLock { $0 = "the connection failed: \(error)" }
                    metrics.connectionFailed()
                    logger.notice("a sync connection failed: \(error)")
                }
                return false
            }
            group.addTask(executorPreference: SessionThreads.executor) {
                let handler = SyncSessionHandler(store: store, authenticator: authenticator, rules: rules, options: options,
                                                 pathAppId: pathAppId, watch: watch, sessionId: id,
                                                 logger: logger) { message in
                    let text = SyncCoding.encode(message)
                    metrics.sent(message, bytes: text.utf8.count, session: id)
                    try await outbound.write(.text(text))
                }
                // SIGTERM or SIGINT (``GracefulShutdown``): the session handles what it received
                // before the `.drain` event (uploads are committed and acknowledged), then closes
                // with 1001 (going away); the client reconnects, to another server if there is one,
                // and sends again what was not acknowledged. The HTTP server's own shutdown, after
                // --shutdown-timeout, ends a session still busy after the event in hand.
                var drained = false
                try await withGracefulShutdownHandler {
                    for await event in events {
                        if case .drain = event {
                            drained = true
                            break
                        }
                        if try await !handler.handle(event) { break }
                    }
                } onGracefulShutdown: {
                    continuation.yield(.closed)
                }
                if drained {
                    ending.reason.withLock { $0 = "the server is shutting down" }
                    try? await outbound.close(.goingAway, reason: "the server is shutting down")
                }
                return true
            }
            // The session ended: stop reading the connection.
            while let sessionEnded = try await group.next() {
                if sessionEnded { group.cancelAll() }
            }
        }
    }
    // Uploads of 500 changes are larger than the default 16 KiB frame limit.
    let http = HTTPServerBuilder.http1WebSocketUpgrade(webSocketRouter: router,
                                                       configuration: .init(maxFrameSize: options.maxMessageBytes))
    return Application(
        router: router,
        server: try tls.map { try .tls(http, tlsConfiguration: $0) } ?? http,
        configuration: .init(address: .hostname(options.host, port: options.port)),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? options.port
            FileHandle.standardOutput.write(Data("trellis-sync listening on \(options.host):\(port)\n".utf8))
        },
        logger: logger
    )
}

/// Why a sync session ended, as its connection's read loop saw it (logged when it ends).
final class SessionEnding: Sendable {
    let reason = Mutex("ended by the server")
}
