import Foundation
import Testing
import TrellisLMDBFormat
import TrellisStorage
import TrellisTestSupport

/// A real process converting a file is killed (SIGKILL, sent to itself at a seeded progress
/// step: while copying, after the new file is written, verified, after the backup is made, after
/// the rename), and the next upgrade ends with every entry intact.
/// `TRELLIS_LMDB_UPGRADE_KILLS=N` sets the number of kills (default 12, always including each
/// step after the copy).
@Suite struct LMDBUpgradeKillTests {
    private static func helperURL() -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("TrellisStorageProcessHelper")
    }

    @Test func aConversionKilledAtAnyStepEndsWithTheDataIntact() throws {
        let directory = temporaryDirectory("lmdb-kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = directory + "/original.realm"
        let expected = LMDBConversionTests.makeFile(original, seed: 51, databases: 8, entries: 800)
        try? FileManager.default.removeItem(atPath: original + "-lock")

        // How many progress steps a whole conversion reports.
        let probe = directory + "/probe.realm"
        try FileManager.default.copyItem(atPath: original, toPath: probe)
        var total = 0
        try LMDBUpgrade.upgrade(path: probe) { _ in total += 1 }

        var random = SplitMix64(seed: 51)
        let kills = environmentInteger("TRELLIS_LMDB_UPGRADE_KILLS", default: 12)
        // The last five steps (written, verified, backup made, replaced, finished), then seeded
        // points anywhere.
        let stops = ((total - 4)...total).map { $0 } + (0..<max(0, kills - 5)).map { _ in 1 + random.below(total) }
        var outcomes: [String: Int] = [:]
        for (round, stop) in stops.enumerated() {
            let path = directory + "/round\(round).realm"
            try FileManager.default.copyItem(atPath: original, toPath: path)

            // Given a conversion killed at step `stop`
            let process = Process()
            process.executableURL = Self.helperURL()
            process.arguments = ["lmdb-upgrade", path, String(stop)]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                    "stop \(stop) of \(total): the helper was not killed (status \(process.terminationStatus))")

            // Then one of the two files is whole: the original, or the converted one with its backup
            let state = LMDBUpgrade.state(ofFileAt: path)
            #expect(state == .lmdb || state == .convertedWithBackup || state == .trellisStorage,
                    "stop \(stop): \(state)")
            outcomes["\(state)", default: 0] += 1

            // and the next upgrade (the next open) ends with every entry intact.
            try LMDBUpgrade.upgrade(path: path)
            #expect(LMDBUpgrade.state(ofFileAt: path) == .trellisStorage)
            #expect(LMDBConversionTests.leftovers(path).isEmpty, "stop \(stop)")
            let actual = try LMDBConversionTests.storageView(path)
            #expect(Set(actual.keys) == Set(expected.keys), "stop \(stop)")
            for (name, dump) in expected { #expect(actual[name] == dump ? true : false, "stop \(stop), tree '\(name)'") }
            for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        print("LMDBUpgradeKillTests: \(stops.count) kills of \(total) steps, states after the kill: \(outcomes)")
    }

    @Test func aFileOpenInAnLMDBProcessIsNotConvertedUntilThatProcessEnds() throws {
        // Given an LMDB-format file that another process has open with liblmdb
        let directory = temporaryDirectory("lmdb-in-use")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.realm"
        let expected = LMDBConversionTests.makeFile(path, seed: 81, databases: 4, entries: 100)
        let holder = Process()
        holder.executableURL = Self.helperURL()
        holder.arguments = ["hold-lmdb", path]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer {
            // Also when an expectation below fails: the holder must never outlive the test.
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
        }
        let line = output.fileHandleForReading.availableData
        #expect(String(decoding: line, as: UTF8.self).hasPrefix("holding"))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // When it is upgraded, the upgrade refuses and changes nothing
        let error = try #require(throws: LMDBFormatError.self) { try LMDBUpgrade.upgrade(path: path) }
        #expect(error.code == .fileInUse)
        #expect(error.message.contains("open in another process"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(LMDBConversionTests.leftovers(path).isEmpty)

        // and once that process is gone (killed), the upgrade converts it.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(try LMDBUpgrade.upgrade(path: path).outcome == .converted)
        let actual = try LMDBConversionTests.storageView(path)
        for (name, dump) in expected { #expect(actual[name] == dump ? true : false, "tree '\(name)'") }
    }
}
