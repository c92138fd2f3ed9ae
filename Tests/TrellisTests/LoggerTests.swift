import Foundation
import Testing
@testable import Trellis

/// Realm's Logger: levels per category, a shared logger, and what Trellis logs.
@Suite(.serialized) struct LoggerTests {
    let folder = TemporaryFolder()

    @Test func levelsFollowTheCategoryHierarchy() {
        defer { Logger.setLogLevel(.warn, for: Category.realm) }
        Logger.setLogLevel(.info, for: Category.realm)
        #expect(Logger.logLevel(for: Category.Storage.transaction) == .info)
        Logger.setLogLevel(.trace, for: Category.Storage.all)
        #expect(Logger.logLevel(for: Category.Storage.transaction) == .trace)
        #expect(Logger.logLevel(for: Category.sdk) == .info)
        Logger.setLogLevel(.error, for: Category.realm)
        #expect(Logger.logLevel(for: Category.Storage.query) == .error)
    }

    /// Realm 10.54 still has `Logger(level:function:)`, deprecated; code using it compiles.
    @available(*, deprecated)
    @Test func theDeprecatedLevelAndFunctionInitializerSetsTheLevelOfEveryCategory() {
        let heard = LockedBox<[String]>([])
        defer { Logger.setLogLevel(.warn, for: Category.realm) }
        let logger = Logger(level: .detail) { level, category, _ in heard.mutate { $0.append("\(level) \(category.rawValue)") } }
        #expect(Logger.logLevel(for: Category.Storage.transaction) == .detail)
        logger.log(level: .detail, category: Category.Storage.object, message: "heard")
        logger.log(level: .debug, category: Category.Storage.object, message: "below the level")
        #expect(heard.get() == ["detail Realm.Storage.Object"])
    }

    @Test func aCustomSharedLoggerHearsOpeningsCommitsAndCompaction() throws {
        let messages = LockedBox<[String]>([])
        let previous = Logger.shared
        Logger.shared = Logger(level: .debug) { level, message in
            messages.mutate { $0.append("\(level): \(message)") }
        }
        defer {
            Logger.shared = previous
            Logger.setLogLevel(.warn, for: Category.realm)
        }
        let url = folder.file("logged.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog()) }
        }
        try onOtherThread {
            _ = try Realm(configuration: .init(fileURL: url, shouldCompactOnLaunch: { _, _ in true }, objectTypes: [Dog.self]))
        }
        let log = messages.get()
        #expect(log.contains { $0.hasPrefix("detail: DB: ") && $0.contains("Open file: ") && $0.contains("logged.realm") },
                "\(log)")
        #expect(log.contains { $0.hasPrefix("debug: Committed version") }, "\(log)")
        #expect(log.contains { $0.hasPrefix("info: Compacted '") }, "\(log)")
        #expect(!log.contains { $0.hasPrefix("trace:") })
    }

    /// Realm's LoggerTests (testDefaultLogger, testSetDefaultLogLevel): opening a Realm logs
    /// storage lines that read "Details DB:" at `.detail` and "Trace DB:" at `.trace` when
    /// prefixed with Realm's level names, and none at `.off`.
    @Test func openingARealmLogsRealmsDetailAndTraceStorageLines() throws {
        let messages = LockedBox<[String]>([])
        let previous = Logger.shared
        defer {
            Logger.shared = previous
            Logger.setLogLevel(.warn, for: Category.realm)
        }
        let realmsName: [LogLevel: String] = [.detail: "Details", .trace: "Trace", .debug: "Debug", .info: "Info"]
        let logger = Logger(level: .off) { level, message in
            messages.mutate { $0.append("\(realmsName[level] ?? "\(level)") \(message)") }
        }
        Logger.shared = logger
        // Lines of this test's files only (other suites may open files meanwhile).
        func open(_ name: String, reads: Bool = true) throws -> [String] {
            messages.set([])
            let url = folder.file(name)
            try onOtherThread {
                let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
                if reads { _ = realm.objects(Dog.self).count }
            }
            let all = messages.get()
            guard let opening = all.first(where: { $0.hasSuffix("Open file: \(url.path)") }),
                  let id = opening.split(separator: " ").dropFirst(2).first
            else { return all.filter { $0.contains(url.path) } }
            return all.filter { $0.contains("DB: \(id) Thread ") }
        }
        #expect(try open("off.realm").isEmpty)
        logger.level = .detail
        var lines = try open("detail.realm")
        #expect(lines.contains { $0.hasPrefix("Details DB: ") && $0.contains("Open file: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("Details DB: ") && $0.hasSuffix(": DB closed") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("Trace DB:") }, "\(lines)")
        logger.level = .trace
        lines = try open("trace.realm")
        #expect(lines.contains { $0.hasPrefix("Details DB: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("Trace DB: ") && $0.contains(": Start read ") }, "\(lines)")
        // An open with no read logs the open's own read, as Realm's `_ = try Realm()` does.
        lines = try open("unread.realm", reads: false)
        #expect(lines.contains { $0.hasPrefix("Trace DB: ") && $0.contains(": Start read ") }, "\(lines)")
        logger.level = .all
        lines = try open("detail.realm")  // opened again: Realm logs the opening again
        #expect(lines.contains { $0.hasPrefix("Details DB: ") && $0.contains("Open file: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("Trace DB: ") }, "\(lines)")
    }

    @Test func writeTransactionsLogRealmsWriteLockAndCommitTraceLines() throws {
        let messages = LockedBox<[String]>([])
        let previous = Logger.shared
        defer {
            Logger.shared = previous
            Logger.setLogLevel(.warn, for: Category.realm)
        }
        Logger.shared = Logger(level: .trace) { level, message in messages.mutate { $0.append("\(level) \(message)") } }
        let url = folder.file("written.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write { realm.add(Dog()) }
        }
        let all = messages.get()
        let opening = try #require(all.first { $0.hasSuffix("Open file: \(url.path)") })
        let id = try #require(opening.split(separator: " ").dropFirst(2).first)
        let lines = all.filter { $0.contains("DB: \(id) Thread ") }.map { $0.components(separatedBy: ": ").dropFirst(2).joined(separator: ": ") }
        for expected in ["acquire writemutex", "writemutex acquired", "writemutex released"] {
            #expect(lines.contains(expected), "\(lines)")
        }
        #expect(lines.contains { $0.hasPrefix("Start write ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("Committing version ") && $0.hasSuffix(" to disk") }, "\(lines)")
    }
}
