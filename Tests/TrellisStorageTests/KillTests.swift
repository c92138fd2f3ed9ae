import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Real processes killed with SIGKILL: two writers (`TrellisStorageProcessHelper writer`) commit
/// to one file while a reader process checks every snapshot; a random one is killed and
/// restarted, again and again. Each commit adds 1 to a counter and appends the entry of that
/// number, so a lost or partial commit shows as a counter and a log that disagree, and a page
/// reused under a reader as a checksum error in the reader. At the end the file must pass
/// `check()` with counter == entries == last key.
///
/// `TRELLIS_STORAGE_KILLS` sets the number of kills (default 100), `TRELLIS_STORAGE_KILL_SEED`
/// the seed of the kill schedule (default 99). A helper that stops by itself (it found damage)
/// fails the test at once, naming the round, the seed and what the helper reported; every helper
/// is killed and reaped however the test ends.
@Suite(.serialized) struct KillTests {
    @Test func killedWritersAndReadersNeverLeaveAPartialCommit() throws {
        try Self.run(kills: environmentInteger("TRELLIS_STORAGE_KILLS", default: 100),
                     seed: environmentInteger("TRELLIS_STORAGE_KILL_SEED", default: 99), key: nil)
    }

    /// The same with an encrypted file (docs/STORAGE.md, section 12);
    /// `TRELLIS_STORAGE_ENCRYPTED_KILLS` sets the number of kills (default 60).
    @Test func killedWritersAndReadersOfAnEncryptedFileNeverLeaveAPartialCommit() throws {
        try Self.run(kills: environmentInteger("TRELLIS_STORAGE_ENCRYPTED_KILLS", default: 60),
                     seed: environmentInteger("TRELLIS_STORAGE_KILL_SEED", default: 99), key: EncryptionTests.key)
    }

    private static func run(kills: Int, seed: Int, key: [UInt8]?) throws {
        let directory = temporaryDirectory("kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let helpers = HelperProcesses(directory: directory)
        if let key { helpers.environment["TRELLIS_STORAGE_TEST_KEY"] = key.map { String(format: "%02x", $0) }.joined() }
        defer { helpers.stopAll() }
        var random = SplitMix64(seed: UInt64(seed))
        let roles = ["writer", "writer", "reader"]
        func arguments(_ role: String, seed: Int) -> [String] { role == "writer" ? [role, path, "\(seed)"] : [role, path] }
        var processes = try roles.enumerated().map { try helpers.start(arguments($1, seed: $0 + 1)) }
        for round in 0..<kills {
            Thread.sleep(forTimeInterval: Double(20 + random.below(120)) / 1000)
            let victim = random.below(processes.count)
            for (index, process) in processes.enumerated() where !process.isRunning {
                // A helper that stops by itself found a problem (3: a partial commit; 5: an error
                // such as a checksum mismatch).
                let problem = helpers.describeExit(of: process)
                Issue.record("round \(round) of \(kills), seed \(seed): the \(roles[index]) helper \(problem) (file \(path))")
                return
            }
            helpers.kill(processes[victim])
            processes[victim] = try helpers.start(arguments(roles[victim], seed: round + 10))
        }
        helpers.stopAll()
        var options = StorageEnvironment.Options()
        options.encryptionKey = key
        let environment = try StorageEnvironment(path: path, options: options)
        defer { environment.close() }
        _ = try environment.check()
        try environment.read { read in
            let counter = try read.get("counter", key: [0]).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } } ?? 0
            let cursor = try read.cursor("log")
            var expected: UInt64 = 1
            var more = try cursor.first()
            while more {
                let key = try cursor.withKey { $0.loadUnaligned(as: UInt64.self) }
                guard key == expected else {
                    Issue.record("seed \(seed), after \(kills) kills: log entry \(key) where \(expected) was expected")
                    return
                }
                expected += 1
                more = try cursor.next()
            }
            #expect(expected - 1 == counter, "seed \(seed), after \(kills) kills: counter \(counter), \(expected - 1) log entries")
            #expect(counter > 0, "seed \(seed): no commit in \(kills) rounds")
            print("KillTests: \(kills) kills, seed \(seed), \(counter) commits\(key == nil ? "" : ", encrypted")")
        }
    }
}
