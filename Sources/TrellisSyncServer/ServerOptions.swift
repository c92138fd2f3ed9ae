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
    /// The HS256 key that signs access tokens and verifies `.jwt` logins.
    var jwtKey = "trellis-development-key-change-me-please"
    /// Lifetime of the access tokens the server issues (seconds).
    var tokenLifetime = 3600
    /// Exit when this process is gone (tests: no server outlives its test run).
    var parentPid: Int32?
    /// Crash points for the recovery tests (`--kill-before-upload-commit N`,
    /// `--kill-after-upload-commit N`).
    var faults = FaultInjection()

    static let usage = """
        usage: trellis-sync --postgres postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE --schema SCHEMA.json
                            [--host 127.0.0.1] [--port 9090] [--app-id trellis] [--schema-version 0]
                            [--jwt-key KEY] [--token-lifetime SECONDS] [--parent-pid PID]
                            [--kill-before-upload-commit N] [--kill-after-upload-commit N]
        Serves Trellis Sync (see docs/SYNC.md): one table per collection of SCHEMA.json (App Services JSON
        schemas, as `trellis schema export` writes them) in the PostgreSQL database, created if missing.
        Prints 'trellis-sync listening on HOST:PORT' once it accepts connections.
        --kill-before-upload-commit N / --kill-after-upload-commit N (crash tests): the process kills itself
        with SIGKILL when its N-th upload is written but not committed / committed but not acknowledged.
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
            case "--token-lifetime": options.tokenLifetime = Int(try value(argument)) ?? 3600
            case "--parent-pid": options.parentPid = Int32(try value(argument))
            case "--kill-before-upload-commit": options.faults.killBeforeCommitOfUpload = Int(try value(argument))
            case "--kill-after-upload-commit": options.faults.killAfterCommitOfUpload = Int(try value(argument))
            case "--help", "-h": throw OptionError(usage)
            default: throw OptionError("Unknown option '\(argument)'.\n\(usage)")
            }
        }
        if options.postgresURL.isEmpty { options.postgresURL = ProcessInfo.processInfo.environment["TRELLIS_SYNC_POSTGRES"] ?? "" }
        guard !options.postgresURL.isEmpty else { throw OptionError("--postgres is required.\n\(usage)") }
        guard !options.schemaPath.isEmpty else { throw OptionError("--schema is required.\n\(usage)") }
        guard (0...65535).contains(options.port) else { throw OptionError("--port must be 0...65535.") }
        guard options.jwtKey.utf8.count >= 32 else {
            throw OptionError("--jwt-key must be at least 32 bytes (HS256 needs a key as long as its hash).")
        }
        return options
    }
}

struct OptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The pieces of a `postgres://user:password@host:port/database` URL.
struct PostgresURL {
    var user: String
    var password: String?
    var host: String
    var port: Int
    var database: String

    init(_ text: String) throws {
        guard let components = URLComponents(string: text), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty
        else { throw OptionError("'\(text)' is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE).") }
        user = components.user ?? "postgres"
        password = components.password
        self.host = host
        port = components.port ?? 5432
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? user : path
    }
}

/// The server's schema: one shape per collection, from the schema file.
struct ServerSchema: Sendable {
    var collections: [String: SchemaShape]

    init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OptionError("Cannot read the schema file '\(path)'.")
        }
        let json = try JSONValue(jsonText: String(decoding: data, as: UTF8.self))
        var documents = [JSONValue]()
        switch json {
        case .array(let items): documents = items
        case .object(let object) where object["title"] != nil: documents = [json]
        case .object(let object): documents = object.keys.sorted().compactMap { object[$0] }
        default: throw OptionError("The schema file '\(path)' must hold App Services JSON schemas.")
        }
        collections = [:]
        for document in documents {
            let shape = try SchemaShape(document: document)
            guard shape.primaryKey != nil else {
                throw OptionError("The collection '\(shape.className)' has no primary key (an '_id' property).")
            }
            collections[shape.className] = shape
        }
    }
}
