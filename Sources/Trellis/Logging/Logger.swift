import Foundation
import Synchronization

/// How much a ``Logger`` reports, from nothing to everything (Realm's levels).
public enum LogLevel: Int, Sendable, Comparable, CustomStringConvertible {
    case off, fatal, error, warn, info, detail, debug, trace, all

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .off: "off"
        case .fatal: "fatal"
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .detail: "detail"
        case .debug: "debug"
        case .trace: "trace"
        case .all: "all"
        }
    }
}

/// A category of log messages (Realm's hierarchy, e.g. `Category.Storage.transaction`).
public protocol LogCategory: Sendable {
    /// The category's dotted name (`"Realm.Storage.Transaction"`).
    var rawValue: String { get }
}

/// Realm's log categories. Setting a category's level sets its subcategories' too.
public enum Category: String, LogCategory {
    /// Everything Trellis logs.
    case realm = "Realm"
    /// The Swift layer.
    case sdk = "Realm.SDK"
    /// App Services (sync; Trellis Sync logs here).
    case app = "Realm.App"

    /// The database.
    public enum Storage: String, LogCategory {
        case all = "Realm.Storage"
        case transaction = "Realm.Storage.Transaction"
        case query = "Realm.Storage.Query"
        case object = "Realm.Storage.Object"
        case notification = "Realm.Storage.Notification"
    }

    /// Synchronisation.
    public enum Sync: String, LogCategory {
        case all = "Realm.Sync"
        case server = "Realm.Sync.Server"

        /// The sync client.
        public enum Client: String, LogCategory {
            case all = "Realm.Sync.Client"
            case session = "Realm.Sync.Client.Session"
            case changeset = "Realm.Sync.Client.Changeset"
            case network = "Realm.Sync.Client.Network"
            case reset = "Realm.Sync.Client.Reset"
        }
    }
}

/// Where Trellis's log messages go: Realm's `Logger`.
///
/// ```swift
/// Logger.shared = Logger(level: .debug) { level, message in print("[\(level)] \(message)") }
/// Logger.setLogLevel(.trace, for: Category.Storage.transaction)
/// ```
///
/// Trellis logs opening files (`.detail`), migrations and compaction (`.info`), write
/// transactions (`.debug` when they commit, `.trace` when they begin) and recoverable errors
/// (`.error`). The default logger writes to standard error at `.warn` and above (Realm's
/// default is `.info` to the system log; on Linux a command-line tool's standard error is the
/// user's terminal, so the default stays quiet).
public final class Logger: Sendable {
    private let function: @Sendable (LogLevel, any LogCategory, String) -> Void

    /// Creates a logger that calls `logFunction` for messages at `level` or more important, and
    /// sets that as the level of every category.
    public convenience init(level: LogLevel, logFunction: @escaping @Sendable (LogLevel, String) -> Void) {
        self.init(function: { level, _, message in logFunction(level, message) })
        Logger.setLogLevel(level, for: Category.realm)
    }

    /// Creates a logger that calls `function` with each message's level and category.
    public init(function: @escaping @Sendable (LogLevel, any LogCategory, String) -> Void) {
        self.function = function
    }

    /// Creates a logger that calls `function` with each message's level and category, and sets
    /// `level` as the level of every category. Deprecated in Realm 10.54, kept so code written
    /// for it compiles.
    @available(*, deprecated, message: "Use init(function:)")
    public convenience init(level: LogLevel, function: @escaping @Sendable (LogLevel, any LogCategory, String) -> Void) {
        self.init(function: function)
        Logger.setLogLevel(level, for: Category.realm)
    }

    /// The logger every Realm writes to.
    public static var shared: Logger {
        get { state.withLock { $0.shared } }
        set { state.withLock { $0.shared = newValue } }
    }

    /// The level of the top category (``Category/realm``).
    public var level: LogLevel {
        get { Logger.logLevel(for: Category.realm) }
        set { Logger.setLogLevel(newValue, for: Category.realm) }
    }

    /// Sets the level of `category` and its subcategories.
    public static func setLogLevel(_ level: LogLevel, for category: any LogCategory = Category.realm) {
        state.withLock { state in
            let prefix = category.rawValue
            for name in state.levels.keys where name == prefix || name.hasPrefix(prefix + ".") { state.levels[name] = level }
            state.levels[prefix] = level
        }
        refreshMostVerbose()
    }

    /// The level of `category` (its own, else its nearest parent's).
    public static func logLevel(for category: any LogCategory) -> LogLevel {
        state.withLock { $0.level(for: category.rawValue) }
    }

    /// Logs `message` at `level` in `category`, if that category's level lets it through.
    public func log(level: LogLevel, category: any LogCategory = Category.realm, message: String) {
        guard level != .off, level <= Logger.logLevel(for: category) else { return }
        function(level, category, message)
    }

    // MARK: - Trellis's own messages

    private struct State {
        var shared = Logger(function: { level, category, message in
            FileHandle.standardError.write(Data("\(category.rawValue) \(level): \(message)\n".utf8))
        })
        var levels: [String: LogLevel] = ["Realm": .warn]

        func level(for name: String) -> LogLevel {
            var name = name
            while true {
                if let level = levels[name] { return level }
                guard let dot = name.lastIndex(of: ".") else { return .warn }
                name = String(name[..<dot])
            }
        }
    }
    private static let state = Mutex(State())
    /// The most verbose level any category has: messages above it are not even formatted.
    private static let mostVerbose = Atomic<Int>(LogLevel.warn.rawValue)

    private static func refreshMostVerbose() {
        let verbose = state.withLock { $0.levels.values.map(\.rawValue).max() ?? LogLevel.warn.rawValue }
        mostVerbose.store(verbose, ordering: .relaxed)
    }

    /// Logs a message of Trellis's; `message` is only built when some category wants `level`.
    static func log(_ level: LogLevel, _ category: any LogCategory, _ message: @autoclosure () -> String) {
        guard level.rawValue <= mostVerbose.load(ordering: .relaxed) else { return }
        shared.log(level: level, category: category, message: message())
    }
}
