import Foundation
import TrellisSyncProtocol

/// The server's settings, from the command line (`trellis-sync --help`).
struct ServerOptions: Sendable {
    var host = "127.0.0.1"
    var port = 9090
    var postgresURL = ""
    var schemaPath = ""
    var appId = "trellis"
    var schemaVersion: UInt64 = 0
    /// The Custom JWT provider's HS256 key: verifies `.jwt` login tokens (never signs).
    var jwtKey: String?
    /// Lifetime of the access tokens the server issues (seconds; App Services: 30 minutes).
    var tokenLifetime = 1800
    /// Lifetime of refresh tokens (seconds; App Services: 60 days).
    var refreshTokenLifetime = 60 * 86400
    /// The rules file or App Services app folder (`--rules`).
    var rulesPath: String?
    /// No rules: everyone reads and writes everything (`--allow-all`, development only).
    var allowAll = false
    /// The login providers switched on (`--auth anonymous,jwt`).
    var authProviders: Set<AuthProvider> = []
    /// How far ahead of the server's clock an upload's timestamp may be before it is set to
    /// the server's clock (`--max-clock-skew SECONDS`, 300).
    var maxClockSkewMilliseconds: Int64 = 300_000
    /// The largest WebSocket message the server reads (`--max-message-bytes`, 16 MiB); the
    /// first message of a connection (the hello, before the token is checked) may be 1 MiB at most.
    var maxMessageBytes = 16 << 20
    /// The most object changes one upload may hold (`--max-changes-per-upload`, 1,000; the
    /// client sends at most 500): numbering an upload's history entries under the history lock
    /// takes time per entry, so this bounds how long one upload holds up the others.
    var maxChangesPerUpload = 1_000
    /// Per-connection rate limits (``ConnectionRateLimit``): messages and bytes a second a
    /// client may send before the server slows its reading (`--max-messages-per-second`, 100;
    /// `--max-bytes-per-second`, 16 MiB). At the client's 500 changes an upload that is up to
    /// 50,000 changes a second per connection: a device's backlog of 100,000 objects uploads in
    /// seconds, not at 10,000 a second as with the first defaults (20 messages, 4 MiB). What
    /// one connection can do to others is bounded per upload in flight (a connection's messages
    /// are handled one at a time; docs/SYNC.md, "Limits"), whatever these rates.
    var maxMessagesPerSecond = 100
    var maxBytesPerSecond = 16 << 20
    /// How often the history is polled besides `LISTEN` (`--history-poll-interval MILLISECONDS`,
    /// 1000): only a fallback for a notification lost with a broken connection.
    var historyPollMilliseconds = 1_000
    /// How long a SIGTERM or SIGINT waits for the sessions to finish what they received
    /// (`--shutdown-timeout SECONDS`, 10) before they are cancelled; the process exits at
    /// the latest 5 s after that (2 × the timeout + 5 s after the signal, whatever it waits for).
    var shutdownTimeoutSeconds = 10
    /// How long history entries and tombstones are kept (`--history-retention SECONDS`; nil:
    /// forever). Clients that synced longer ago are reset (``HistoryPruning``).
    var historyRetentionSeconds: Double?
    /// The PEM certificate (chain) and private key served to clients with TLS (`--tls-cert`,
    /// `--tls-key`; both or neither): then clients use `https://` and `wss://`.
    var tlsCertificatePath: String?
    var tlsKeyPath: String?
    /// Exit when this process is gone (tests: no server outlives its test run; ``ParentWatch``).
    var parentPid: Int32?
    /// Crash points for the recovery tests (`--kill-before-upload-commit N`,
    /// `--kill-after-upload-commit N`).
    var faults = FaultInjection()

    static let usage = """
        usage: trellis-sync --postgres postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE --schema SCHEMA
                            (--rules RULES | --allow-all) --auth PROVIDERS
                            [--host 127.0.0.1] [--port 9090] [--app-id trellis] [--schema-version 0]
                            [--jwt-key KEY] [--token-lifetime SECONDS] [--refresh-token-lifetime SECONDS]
                            [--max-clock-skew SECONDS] [--max-message-bytes BYTES] [--max-changes-per-upload N]
                            [--max-messages-per-second N] [--max-bytes-per-second BYTES]
                            [--history-poll-interval MILLISECONDS] [--shutdown-timeout SECONDS]
                            [--tls-cert PEM --tls-key PEM] [--history-retention SECONDS] [--parent-pid PID] [--kill-before-upload-commit N] [--kill-after-upload-commit N]
                            [--pause-after-merge MILLISECONDS] [--hold-upload-commit-until PATH]
                            [--busy-per-large-message MILLISECONDS]
        Serves Trellis Sync (see docs/SYNC.md): one table per collection of SCHEMA in the PostgreSQL database,
        created if missing. Prints 'trellis-sync listening on HOST:PORT' once it accepts connections.
        GET /health and GET /metrics (Prometheus text) on the same port: docs/SYNC.md, "Operations".
        The PostgreSQL URL may end in ?sslmode=disable|prefer|require|verify-ca|verify-full[&sslrootcert=CA.pem]
        (libpq's meaning; default disable): docs/SYNC.md, "TLS to PostgreSQL".
        Example (docs/SYNC.md, "Running the server"):
          trellis schema export app.realm --app-services --out atlas/
          trellis-sync --postgres postgres://me@127.0.0.1/app --schema atlas/ --rules rules.json --auth anonymous
        --schema SCHEMA   App Services JSON schemas: the folder `trellis schema export --app-services --out DIR`
                          writes (DIR/<Class>/schema.json; an App Services app folder works too), or one JSON
                          file of schemas.
        --rules RULES     Device Sync permissions: an App Services app folder (data_sources/<service>/<database>/
                          <collection>/rules.json and default_rule.json) or one JSON file of rules documents.
        --allow-all       No rules: every user reads and writes everything (development only; logs a warning).
        --auth PROVIDERS  Login providers to switch on, comma-separated: anonymous, jwt.
        --jwt-key KEY     The key (32+ bytes) your auth service signs HS256 login tokens with (needed by --auth jwt).
                          Access and refresh tokens are signed with a random key the server keeps in PostgreSQL.
        --token-lifetime  Access token lifetime in seconds (1800). --refresh-token-lifetime: refresh tokens (5184000).
        --max-clock-skew  How far (seconds, 300) an upload's timestamps may be ahead of the server's clock; later
                          ones are set to the server's clock, so a device whose clock runs ahead cannot win every
                          conflict. Timestamps that are not hybrid logical clock timestamps are refused.
        --max-message-bytes  The largest WebSocket message read (16777216); a connection's first message (its
                          hello, read before its token is checked) may be 1 MiB at most.
        --max-changes-per-upload N  The most object changes one upload may hold (1000; the client sends at most
                          500): a larger upload is refused (error 230, nothing of it applied).
        --max-messages-per-second N / --max-bytes-per-second BYTES  Each connection's rate (100 messages and
                          16777216 bytes a second, a second's worth at once; one largest message is always let
                          through; the client's uploads hold up to 500 changes, so 50,000 changes a second). A client over it is slowed, not cut off: the server reads its next message
                          only when its budget allows, so a burst after being offline just takes longer.
        --history-poll-interval  How often (milliseconds, 1000) the history is read besides PostgreSQL's
                          notifications (LISTEN trellis_history), in case one is lost with a broken connection.
        --shutdown-timeout  On SIGTERM or SIGINT the server stops accepting connections, applies and acknowledges
                          the messages each session has received, and closes the sessions (WebSocket close code
                          1001, going away); sessions still busy after this many seconds (10) are cancelled (an
                          upload not committed is rolled back; its client sends it again), and the process exits
                          at the latest 5 s later.
        --history-retention SECONDS  Prune history entries (superseded ones and deletes) and tombstones older
                          than this; clients that last synced before it get a client reset (error 222). Default:
                          keep everything.
        --tls-cert PEM --tls-key PEM  Serve HTTPS and WSS with this certificate chain and private key (PEM files);
                          clients then use https:// in AppConfiguration.baseURL.
        --parent-pid PID          Stop when the process PID has ended (also killed with SIGKILL and not reaped
                          yet): for tests and scripts that start a server for themselves.
        --kill-before-upload-commit N / --kill-after-upload-commit N (crash tests): the process kills itself
        with SIGKILL when its N-th upload is written but not committed / committed but not acknowledged.
        --pause-after-merge MILLISECONDS (tests): wait that long between an upload's merge and its writes.
        --hold-upload-commit-until PATH (tests): before committing each upload, wait until the file PATH exists.
        --busy-per-large-message MILLISECONDS (tests): a session spends that long on the CPU (a busy loop holding its
                          thread) before decoding each message of 64 KiB or more, as decoding a huge message does.
        """

    static func parse(_ arguments: [String]) throws -> ServerOptions {
        var options = ServerOptions()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let next = iterator.next() else { throw OptionError("\(flag) needs a value.\n\(usage)") }
            return next
        }
        while let argument = iterator.next() {
            switch argument {
            case "--host": options.host = try value(argument)
            case "--port": options.port = Int(try value(argument)) ?? -1
            case "--postgres": options.postgresURL = try value(argument)
            case "--schema": options.schemaPath = try value(argument)
            case "--app-id": options.appId = try value(argument)
            case "--schema-version": options.schemaVersion = UInt64(try value(argument)) ?? 0
            case "--jwt-key": options.jwtKey = try value(argument)
            case "--token-lifetime": options.tokenLifetime = Int(try value(argument)) ?? -1
            case "--refresh-token-lifetime": options.refreshTokenLifetime = Int(try value(argument)) ?? -1
            case "--rules": options.rulesPath = try value(argument)
            case "--allow-all": options.allowAll = true
            case "--auth":
                for name in try value(argument).split(separator: ",") {
                    let trimmed = name.trimmingCharacters(in: .whitespaces)
                    guard let provider = AuthProvider(rawValue: trimmed) ?? AuthProvider(pathName: trimmed) else {
                        throw OptionError("--auth: unknown provider '\(trimmed)' (known: anonymous, jwt).")
                    }
                    options.authProviders.insert(provider)
                }
            case "--max-clock-skew":
                guard let seconds = Int64(try value(argument)), seconds >= 0, seconds <= 86_400 * 365 else {
                    throw OptionError("--max-clock-skew must be a number of seconds, 0 or more (default 300).")
                }
                options.maxClockSkewMilliseconds = seconds * 1000
            case "--max-message-bytes":
                guard let bytes = Int(try value(argument)), bytes >= 64 << 10, bytes <= 1 << 30 else {
                    throw OptionError("--max-message-bytes must be a number of bytes from 65536 to 1073741824 "
                        + "(default 16777216).")
                }
                options.maxMessageBytes = bytes
            case "--max-changes-per-upload":
                guard let count = Int(try value(argument)), count >= 500, count <= 1_000_000 else {
                    throw OptionError("--max-changes-per-upload must be a number from 500 (what the client sends at "
                        + "most) to 1000000 (default 1000).")
                }
                options.maxChangesPerUpload = count
            case "--max-messages-per-second":
                guard let count = Int(try value(argument)), count >= 1, count <= 1_000_000 else {
                    throw OptionError("--max-messages-per-second must be a number from 1 to 1000000 (default 100).")
                }
                options.maxMessagesPerSecond = count
            case "--max-bytes-per-second":
                guard let bytes = Int(try value(argument)), bytes >= 1024, bytes <= 1 << 40 else {
                    throw OptionError("--max-bytes-per-second must be a number of bytes from 1024 to 1099511627776 "
                        + "(default 16777216).")
                }
                options.maxBytesPerSecond = bytes
            case "--history-poll-interval":
                guard let milliseconds = Int(try value(argument)), milliseconds >= 10, milliseconds <= 86_400_000 else {
                    throw OptionError("--history-poll-interval must be a number of milliseconds from 10 to 86400000 "
                        + "(default 1000).")
                }
                options.historyPollMilliseconds = milliseconds
            case "--shutdown-timeout":
                guard let seconds = Int(try value(argument)), seconds >= 0, seconds <= 3_600 else {
                    throw OptionError("--shutdown-timeout must be a number of seconds from 0 to 3600 (default 10).")
                }
                options.shutdownTimeoutSeconds = seconds
            case "--history-retention":
                guard let seconds = Double(try value(argument)), seconds >= 1, seconds <= 100 * 365 * 86_400 else {
                    throw OptionError("--history-retention must be a number of seconds from 1 (e.g. 2592000 for 30 days).")
                }
                options.historyRetentionSeconds = seconds
            case "--tls-cert": options.tlsCertificatePath = try value(argument)
            case "--tls-key": options.tlsKeyPath = try value(argument)
            case "--parent-pid": options.parentPid = Int32(try value(argument))
            case "--kill-before-upload-commit": options.faults.killBeforeCommitOfUpload = Int(try value(argument))
            case "--kill-after-upload-commit": options.faults.killAfterCommitOfUpload = Int(try value(argument))
            case "--pause-after-merge": options.faults.pauseAfterMergeMilliseconds = Int(try value(argument))
            case "--hold-upload-commit-until": options.faults.holdUploadCommitUntil = try value(argument)
            case "--busy-per-large-message": options.faults.busyPerLargeMessageMilliseconds = Int(try value(argument))
            case "--help", "-h": throw OptionError(usage)
            default: throw OptionError("Unknown option '\(argument)'.\n\(usage)")
            }
        }
        if options.postgresURL.isEmpty { options.postgresURL = ProcessInfo.processInfo.environment["TRELLIS_SYNC_POSTGRES"] ?? "" }
        guard !options.postgresURL.isEmpty else { throw OptionError("--postgres is required.\n\(usage)") }
        guard !options.schemaPath.isEmpty else { throw OptionError("--schema is required.\n\(usage)") }
        guard (0...65535).contains(options.port) else { throw OptionError("--port must be 0...65535.") }
        if let key = options.jwtKey, key.utf8.count < 32 {
            throw OptionError("--jwt-key must be at least 32 bytes (HS256 needs a key as long as its hash).")
        }
        switch (options.rulesPath, options.allowAll) {
        case (nil, false):
            throw OptionError("No permissions given: pass --rules PATH (an App Services app folder or a rules JSON "
                + "file, see docs/SYNC.md \"Permissions\"), or --allow-all to let every user read and write "
                + "everything (development only).\n\(usage)")
        case (.some, true): throw OptionError("--rules and --allow-all exclude each other.")
        default: break
        }
        guard !options.authProviders.isEmpty else {
            throw OptionError("No login provider is switched on: pass --auth anonymous, --auth jwt or --auth "
                + "anonymous,jwt.\n\(usage)")
        }
        if options.authProviders.contains(.jwt) && options.jwtKey == nil {
            throw OptionError("--auth jwt needs --jwt-key KEY: the key your auth service signs login tokens with.")
        }
        guard options.tokenLifetime > 0, options.refreshTokenLifetime > options.tokenLifetime else {
            throw OptionError("--token-lifetime must be a positive number of seconds, and --refresh-token-lifetime "
                + "longer than it.")
        }
        if (options.tlsCertificatePath == nil) != (options.tlsKeyPath == nil) {
            throw OptionError("--tls-cert and --tls-key go together: give the PEM certificate chain and its private key.")
        }
        return options
    }
}

struct OptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The pieces of a `postgres://user:password@host:port/database[?sslmode=…&sslrootcert=…]` URL
/// (TLS: PostgresURL+TLS.swift).
struct PostgresURL {
    var user: String
    var password: String?
    var host: String
    var port: Int
    var database: String
    /// libpq's `sslmode` (absent: `disable`, as before TLS was supported).
    var sslMode = SSLMode.disable
    /// libpq's `sslrootcert`: the CA certificates (PEM) that verify the server.
    var sslRootCert: String?

    init(_ text: String) throws {
        guard let components = URLComponents(string: text), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty
        else {
            throw OptionError("'\(PostgresURL.redacting(text))' is not a PostgreSQL URL "
                + "(postgres://USER:PASSWORD@HOST:PORT/DATABASE).")
        }
        user = components.user ?? "postgres"
        password = components.password
        self.host = host
        port = components.port ?? 5432
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? user : path
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw OptionError("sslmode '\(item.value ?? "")' in the PostgreSQL URL is not one of "
                        + SSLMode.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                }
                sslMode = mode
            case "sslrootcert": sslRootCert = item.value
            default:
                throw OptionError("The PostgreSQL URL parameter '\(item.name)' is not supported (supported: sslmode, "
                    + "sslrootcert).")
            }
        }
    }

    /// The URL without its password, for messages and logs: `postgres://USER@HOST:PORT/DATABASE`,
    /// with `sslmode` when it is not `disable`.
    var described: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (sslMode == .disable ? "" : "?sslmode=\(sslMode.rawValue)")
    }
}

/// The server's schema: one shape per collection, from the schema file.
struct ServerSchema: Sendable {
    var collections: [String: SchemaShape]
    /// Each collection's App Services schema as read (kept in `trellis_schema`, so the next
    /// server can tell additive changes from breaking ones).
    var documents: [String: JSONValue] = [:]

    /// Reads one JSON file of schemas (an array, one schema, or an object of them), or a folder
    /// holding `schema.json` files at any depth: what `trellis schema export --app-services
    /// --out DIR` writes (`DIR/<Class>/schema.json`) or an App Services app folder
    /// (`data_sources/<service>/<database>/<collection>/schema.json`).
    init(contentsOf path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw OptionError("The schema path '\(path)' does not exist. Give the folder `trellis schema export "
                + "--app-services --out DIR` wrote, or a JSON file of App Services schemas.")
        }
        var documents = [JSONValue]()
        if isFolder.boolValue {
            let files = FileManager.default.enumerator(at: URL(fileURLWithPath: path), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "schema.json" }.sorted { $0.path < $1.path } ?? []
            guard !files.isEmpty else {
                throw OptionError("The folder '\(path)' holds no schema.json: give the folder `trellis schema export "
                    + "--app-services --out DIR` wrote (DIR/<Class>/schema.json).")
            }
            for file in files { documents += try Self.documents(in: file.path) }
        } else {
            documents = try Self.documents(in: path)
        }
        try self.init(documents: documents)
    }

    private static func documents(in path: String) throws -> [JSONValue] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OptionError("Cannot read the schema file '\(path)'.")
        }
        let json: JSONValue
        do {
            json = try JSONValue(jsonText: String(decoding: data, as: UTF8.self))
        } catch {
            throw OptionError("The schema file '\(path)' is not valid JSON: \(error).")
        }
        switch json {
        case .array(let items): return items
        case .object(let object) where object["title"] != nil: return [json]
        case .object(let object): return object.keys.sorted().compactMap { object[$0] }
        default: throw OptionError("The schema file '\(path)' must hold App Services JSON schemas.")
        }
    }

    init(documents: [JSONValue]) throws {
        collections = [:]
        for document in documents {
            let shape = try SchemaShape(document: document)
            guard shape.primaryKey != nil else {
                throw OptionError("The collection '\(shape.className)' has no primary key (an '_id' property).")
            }
            collections[shape.className] = shape
            self.documents[shape.className] = document
        }
    }
}
