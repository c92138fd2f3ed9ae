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
        #expect(log.contains { $0.hasPrefix("detail: Opening '") && $0.contains("logged.realm") }, "\(log)")
        #expect(log.contains { $0.hasPrefix("debug: Committed version") }, "\(log)")
        #expect(log.contains { $0.hasPrefix("info: Compacted '") }, "\(log)")
        #expect(!log.contains { $0.hasPrefix("trace:") })
    }
}
