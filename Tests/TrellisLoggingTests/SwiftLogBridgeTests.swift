import Foundation
import Logging
import Testing
import Trellis
import TrellisLogging

final class LoggedThing: Object {
    @Persisted var name = ""
}

/// A swift-log handler that keeps what it is given.
final class CapturingHandler: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `entries` is guarded by the lock; the other properties are set
    // before the handler is shared.
    struct Entry: Equatable {
        let level: Logging.Logger.Level
        let message: String
        let category: String?
        let source: String
    }
    private let lock = NSLock()
    private var captured: [Entry] = []
    var metadata: Logging.Logger.Metadata = [:]
    var logLevel: Logging.Logger.Level = .trace

    var entries: [Entry] { lock.lock(); defer { lock.unlock() }; return captured }

    subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let entry = Entry(level: event.level, message: "\(event.message)",
                          category: event.metadata?["realm.category"].map { "\($0)" }, source: event.source)
        lock.lock()
        captured.append(entry)
        lock.unlock()
    }
}

/// The swift-log bridge: Trellis's messages arrive in a swift-log handler with the right level
/// and their Realm category. The tests call the bridge logger directly and change no global
/// level, so they cannot disturb other suites that use `Logger.shared`.
@Suite struct SwiftLogBridgeTests {
    @Test func messagesReachTheSwiftLogHandlerWithTheirLevelAndCategory() {
        let handler = CapturingHandler()
        let bridge = Trellis.Logger(swiftLog: Logging.Logger(label: "test") { _ in handler })
        // `.warn` and more important pass the default level of every category.
        bridge.log(level: .error, category: Category.Storage.transaction, message: "commit failed")
        bridge.log(level: .warn, category: Category.sdk, message: "careful")
        bridge.log(level: .fatal, message: "gone")
        #expect(handler.entries == [
            .init(level: .error, message: "commit failed", category: "Realm.Storage.Transaction", source: "Trellis"),
            .init(level: .warning, message: "careful", category: "Realm.SDK", source: "Trellis"),
            .init(level: .critical, message: "gone", category: "Realm", source: "Trellis"),
        ])
    }

    @Test func theSwiftLogLevelOfTheHandlerStillFilters() {
        let handler = CapturingHandler()
        handler.logLevel = .critical
        let bridge = Trellis.Logger(swiftLog: Logging.Logger(label: "test") { _ in handler })
        bridge.log(level: .error, message: "dropped by swift-log")
        bridge.log(level: .fatal, message: "kept")
        #expect(handler.entries.map(\.message) == ["kept"])
    }

    /// As a server would use it: `Logger.shared` set once, Trellis's own messages (opening a
    /// file, committing) arrive through swift-log. In a child process, so the global logger
    /// and levels of the other tests stay as they are.
    @Test func trellisOwnMessagesArriveThroughSwiftLog() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]) {
            let handler = CapturingHandler()
            Trellis.Logger.shared = Trellis.Logger(level: .debug,
                                                   swiftLog: Logging.Logger(label: "server") { _ in handler })
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-log-\(UUID()).realm")
            defer {
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(atPath: url.path + "-lock")
            }
            do {
                let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [LoggedThing.self]))
                try realm.write { realm.add(LoggedThing()) }
            } catch {
                print("open failed: \(error)")
            }
            for entry in handler.entries {
                print("\(entry.level) \(entry.category ?? "-") \(entry.source) \(entry.message)")
            }
        }
        let lines = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("debug Realm.Storage Trellis DB: ") && $0.contains(": Open file: ") }, "\(lines) \(String(decoding: result?.standardErrorContent ?? [], as: UTF8.self))")
        #expect(lines.contains { $0.hasPrefix("debug Realm.Storage.Transaction Trellis Committed version") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("trace") })
    }

    @Test func levelsMapBothWays() {
        let pairs: [(LogLevel, Logging.Logger.Level?)] = [
            (.off, nil), (.fatal, .critical), (.error, .error), (.warn, .warning), (.info, .info),
            (.detail, .debug), (.debug, .debug), (.trace, .trace), (.all, .trace),
        ]
        for (realm, swift) in pairs { #expect(Trellis.Logger.swiftLogLevel(for: realm) == swift, "\(realm)") }
        #expect(Trellis.Logger.realmLogLevel(for: .notice) == .info)
        #expect(Trellis.Logger.realmLogLevel(for: .critical) == .fatal)
        for level in Logging.Logger.Level.allCases where level != .notice {
            #expect(Trellis.Logger.swiftLogLevel(for: Trellis.Logger.realmLogLevel(for: level)) == level, "\(level)")
        }
    }
}
