import Foundation
import Testing
import TrellisLMDBFormat
import TrellisStorage

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

        var random = SeededRandom(seed: 51)
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
            for (name, dump) in expected { #expect(actual[name] == dump, "stop \(stop), tree '\(name)'") }
            for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        print("LMDBUpgradeKillTests: \(stops.count) kills of \(total) steps, states after the kill: \(outcomes)")
    }
}
