import Logging
import Trellis

/// Sends Trellis's log messages (Realm's `Logger`) to swift-log, for server programs that
/// already log through swift-log. A separate product, so the `Trellis` library itself depends
/// on nothing but LMDB.
///
/// ```swift
/// import Logging
/// import Trellis
/// import TrellisLogging
///
/// Trellis.Logger.shared = Trellis.Logger(level: .info, swiftLog: Logging.Logger(label: "app.database"))
/// ```
///
/// Each message keeps its Realm category in the `realm.category` metadata key; levels map as
/// ``swiftLogLevel(for:)`` says.
extension Trellis.Logger {
    /// A logger that forwards every message Trellis lets through to `logger`, and sets `level`
    /// as the level of every category (as Realm's `Logger(level:logFunction:)` does).
    public convenience init(level: LogLevel, swiftLog logger: Logging.Logger) {
        self.init(swiftLog: logger)
        Trellis.Logger.setLogLevel(level, for: Category.realm)
    }

    /// A logger that forwards every message Trellis lets through to `logger`, leaving the
    /// categories' levels as they are (set them with ``Trellis/Logger/setLogLevel(_:for:)``).
    public convenience init(swiftLog logger: Logging.Logger) {
        self.init(function: { level, category, message in
            guard let swiftLevel = Trellis.Logger.swiftLogLevel(for: level) else { return }
            logger.log(level: swiftLevel, "\(message)", metadata: ["realm.category": "\(category.rawValue)"],
                       source: "Trellis")
        })
    }

    /// The swift-log level of a Realm level: `fatal` → `critical`, `error` → `error`, `warn` →
    /// `warning`, `info` → `info`, `detail` and `debug` → `debug`, `trace` and `all` → `trace`;
    /// `off` → nil (never logged).
    public static func swiftLogLevel(for level: LogLevel) -> Logging.Logger.Level? {
        switch level {
        case .off: nil
        case .fatal: .critical
        case .error: .error
        case .warn: .warning
        case .info: .info
        case .detail, .debug: .debug
        case .trace, .all: .trace
        }
    }

    /// The Realm level matching a swift-log level (`notice` → `info`, `critical` → `fatal`), to
    /// give Trellis the level a swift-log logger is set to.
    public static func realmLogLevel(for level: Logging.Logger.Level) -> LogLevel {
        switch level {
        case .trace: .trace
        case .debug: .debug
        case .info, .notice: .info
        case .warning: .warn
        case .error: .error
        case .critical: .fatal
        }
    }
}
