import Foundation
import Testing

/// SIGKILL in the middle of the long operations: a migration, a `writeCopy` and an Extended
/// JSON import (`TrellisProcessHelper`'s CrashScenarios). After each kill the file must be
/// whole: the migration's old version or its new one, never a mix; no copy or a whole copy;
/// every import block complete or absent; and the consistency checker finds nothing.
///
/// The first round of each runs to the end, to time it; later rounds are killed at a random
/// moment within nine tenths of that time. Kills per test:
/// `TRELLIS_CRASH_SCENARIO_KILLS` (default 6, as CI runs it; `Scripts/crash-test.sh` runs more).
@Suite struct CrashScenarioTests {
    let folder = TemporaryFolder()
    static var kills: Int { Int(ProcessInfo.processInfo.environment["TRELLIS_CRASH_SCENARIO_KILLS"] ?? "") ?? 6 }

    /// Runs the helper; once it printed `signal` (if given), kills it after `delay` seconds
    /// (nil: lets it finish). Returns how long it ran and whether it ended by the kill.
    func victim(_ arguments: [String], signal line: String? = nil, killAfter delay: Double?) throws -> (Double, Bool) {
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let line {
            var seen = ""
            while seen != line {
                let data = output.fileHandleForReading.availableDataUntilNewline()
                if data.isEmpty { break }  // ended before saying it
                seen = String(decoding: data, as: UTF8.self)
            }
        }
        let started = Date()
        if let delay {
            usleep(useconds_t(delay * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
        }
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let killed = process.terminationReason == .uncaughtSignal
        if !killed { #expect(process.terminationStatus == 0, "\(arguments[0]) failed") }
        return (Date().timeIntervalSince(started), killed)
    }

    func check(_ arguments: [String]) throws -> [String: Any] {
        let output = try runHelper(arguments)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect((json["problems"] as? [String])?.isEmpty == true, "\(arguments[0]): \(json["problems"] ?? output)")
        return json
    }

    @Test func sigkillDuringAMigrationLeavesTheOldVersionOrTheNewOneWhole() throws {
        let count = 3000
        let template = folder.file("migration-v1.realm").path
        try runHelper(["migrate-prepare", template, "\(count)"])
        var random = SystemRandomNumberGenerator()
        var duration = 1.0
        var versions = [Int: Int]()
        var killed = 0
        for round in 0...Self.kills {
            let path = folder.file("migration.realm").path
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-lock")
            try FileManager.default.copyItem(atPath: template, toPath: path)
            let delay = round == 0 ? nil : Double.random(in: 0...(duration * 0.9), using: &random)
            let (ran, wasKilled) = try victim(["crash-migrate", path], signal: "migrating", killAfter: delay)
            if round == 0 { duration = max(ran, 0.01) }
            if wasKilled { killed += 1 }
            let json = try check(["migrate-check", path, "\(count)"])
            versions[json["version"] as? Int ?? 0, default: 0] += 1
        }
        #expect(versions[2, default: 0] >= 1)
        print("crash test: \(killed) kills during a migration of \(count) objects (\(String(format: "%.2f", duration)) s); "
            + "found version 1 \(versions[1, default: 0]) times, version 2 \(versions[2, default: 0]) times")
    }

    @Test func sigkillDuringWriteCopyLeavesNoCopyOrAWholeOne() throws {
        let path = folder.file("source.realm").path
        // A source with some history: a crash-test writer runs for a second.
        _ = try victim(["crash-write", path, "7"], killAfter: 1.5)
        var random = SystemRandomNumberGenerator()
        var duration = 1.0
        var outcomes = [String: Int]()
        var killed = 0
        for round in 0...Self.kills {
            let destination = folder.file("copy-\(round).realm").path
            let delay = round == 0 ? nil : Double.random(in: 0...(duration * 0.9), using: &random)
            let (ran, wasKilled) = try victim(["crash-copy", path, destination], killAfter: delay)
            if round == 0 { duration = max(ran, 0.01) }
            if wasKilled { killed += 1 }
            let json = try check(["copy-check", path, destination])
            outcomes[json["copy"] as? String ?? "?", default: 0] += 1
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.url.path) where file.contains("copy-") {
                try? FileManager.default.removeItem(at: folder.file(file))
            }
        }
        #expect(outcomes["whole", default: 0] >= 1)
        print("crash test: \(killed) kills during writeCopy (\(String(format: "%.2f", duration)) s); "
            + "no copy \(outcomes["none", default: 0]) times, a whole copy \(outcomes["whole", default: 0]) times")
    }

    @Test func sigkillDuringAnExtendedJSONImportLeavesEachImportWholeOrAbsent() throws {
        let count = 2000
        let path = folder.file("import.realm").path
        var random = SystemRandomNumberGenerator()
        var duration = 1.0
        var killed = 0
        var blocks = [String: Int]()
        for round in 0...Self.kills {
            let documents = folder.file("documents-\(round)").path
            try runHelper(["import-prepare", path, documents, "\(round)", "\(count)"])
            let delay = round == 0 ? nil : Double.random(in: 0...(duration * 0.9), using: &random)
            let (ran, wasKilled) = try victim(["crash-import", path, documents], signal: "importing", killAfter: delay)
            if round == 0 { duration = max(ran, 0.01) }
            if wasKilled { killed += 1 }
            blocks = try check(["import-check", path, "\(count)"])["blocks"] as? [String: Int] ?? [:]
            try? FileManager.default.removeItem(atPath: documents)
        }
        #expect(blocks["0"] == count)
        print("crash test: \(killed) kills during Extended JSON imports of \(count) documents "
            + "(\(String(format: "%.2f", duration)) s); \(blocks.count) of \(Self.kills + 1) imports whole, the rest absent")
    }
}
