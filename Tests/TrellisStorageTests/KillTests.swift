import Foundation
import Testing
@testable import TrellisStorage

/// Real processes killed with SIGKILL: two writers (`TrellisStorageProcessHelper writer`) commit
/// to one file while a reader process checks every snapshot; a random one is killed and
/// restarted, again and again. Each commit adds 1 to a counter and appends the entry of that
/// number, so a lost or partial commit shows as a counter and a log that disagree. At the end
/// the file must pass `check()` with counter == entries == last key. `TRELLIS_STORAGE_KILLS`
/// sets the number of kills (default 100).
@Suite(.serialized) struct KillTests {
    private static func helperURL() -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("TrellisStorageProcessHelper")
    }

    private static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = helperURL()
        process.arguments = arguments
        process.standardError = FileHandle.standardError
        try process.run()
        return process
    }

    @Test func killedWritersAndReadersNeverLeaveAPartialCommit() throws {
        let kills = environmentInteger("TRELLIS_STORAGE_KILLS", default: 100)
        let directory = temporaryDirectory("kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        var random = SeededRandom(seed: 99)
        var roles = ["writer", "writer", "reader"]
        var processes: [Process] = []
        for (index, role) in roles.enumerated() {
            processes.append(try Self.start(role == "writer" ? [role, path, "\(index + 1)"] : [role, path]))
        }
        for kill in 0..<kills {
            Thread.sleep(forTimeInterval: Double(20 + random.below(120)) / 1000)
            let victim = random.below(processes.count)
            for (index, process) in processes.enumerated() where !process.isRunning {
                // A helper that exited by itself found a problem (3: partial commit seen).
                Issue.record("\(roles[index]) exited with status \(process.terminationStatus) before kill \(kill)")
                return
            }
            Foundation.kill(processes[victim].processIdentifier, SIGKILL)
            processes[victim].waitUntilExit()
            let role = roles[victim]
            processes[victim] = try Self.start(role == "writer" ? [role, path, "\(kill + 10)"] : [role, path])
        }
        for process in processes {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        roles.removeAll()
        let environment = try StorageEnvironment(path: path)
        _ = try environment.check()
        try environment.read { read in
            let counter = try read.get("counter", key: [0]).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } } ?? 0
            let cursor = try read.cursor("log")
            var expected: UInt64 = 1
            var more = try cursor.first()
            while more {
                #expect(try cursor.withKey { $0.loadUnaligned(as: UInt64.self) } == expected)
                expected += 1
                more = try cursor.next()
            }
            #expect(expected - 1 == counter)
            print("KillTests: \(kills) kills, \(counter) commits")
        }
    }
}
