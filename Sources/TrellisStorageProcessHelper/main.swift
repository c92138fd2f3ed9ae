// A second process for TrellisStorageTests' kill test (Tests/TrellisStorageTests/KillTests.swift).
//
//   TrellisStorageProcessHelper writer PATH SEED   commits forever: each commit adds 1 to the counter
//                                                  and appends log entry N (N = the new counter)
//   TrellisStorageProcessHelper reader PATH        reads forever; exits 3 if a snapshot's counter and
//                                                  log disagree (a partial commit)
//   TrellisStorageProcessHelper hold-reader PATH   begins a read transaction, prints "reading", and
//                                                  holds it until killed (compaction's refusal test)
//   TrellisStorageProcessHelper hold-snapshot PATH TREE  begins a read transaction, prints "reading TXN DIGEST"
//                                                  (DIGEST: every key and value of TREE), then for each
//                                                  line on stdin reads the tree again in the same
//                                                  transaction and prints "digest DIGEST" (or "error ...")
//   TrellisStorageProcessHelper fuzz-replay INPUT DIR  runs one storage fuzzer input (StorageFuzzInput)
//                                                  with its file in DIR; prints "sound" or "refused
//                                                  CODE" and exits 0, or prints the finding and exits 6
//   TrellisStorageProcessHelper lmdb-upgrade PATH STOP  converts the LMDB-format file PATH
//                                                  (LMDBUpgrade) and sends itself SIGKILL at its
//                                                  STOP-th progress step; exits 0 if it finishes first
//   TrellisStorageProcessHelper hold-lmdb PATH     opens the LMDB file PATH with liblmdb (as Trellis
//                                                  versions before TrellisStorage did), prints
//                                                  "holding", and keeps it open until killed;
//                                                  liblmdb is loaded when this mode runs
//                                                  (LMDBHolder.swift), so building the package
//                                                  needs no LMDB: only its tests do
//
// Every mode exits (status 9) within 50 ms of the test process's death (ParentWatch).
import Foundation
import TrellisLMDBFormat
import TrellisStorage

func number(_ bytes: [UInt8]?) -> UInt64 {
    guard let bytes, bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
}

func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

ParentWatch.start()
let arguments = CommandLine.arguments
if arguments.count == 4 && arguments[1] == "fuzz-replay" {
    do {
        let input = try Array(Data(contentsOf: URL(fileURLWithPath: arguments[2])))
        switch try StorageFuzzInput.run(input, path: arguments[3] + "/data") {
        case .sound: print("sound")
        case .refused(let code): print("refused \(code)")
        }
        exit(0)
    } catch {
        print("finding: \(error)")
        exit(6)
    }
}
if arguments.count == 3 && arguments[1] == "hold-lmdb" {
    do {
        try LMDBHolder.open(arguments[2])
    } catch {
        print("failed to open: \(error)")
        exit(4)
    }
    FileHandle.standardOutput.write(Data("holding\n".utf8))
    while true { sleep(1) }
}
if arguments.count == 4 && arguments[1] == "lmdb-upgrade" {
    let stop = Int(arguments[3]) ?? 0
    var steps = 0
    do {
        try LMDBUpgrade.upgrade(path: arguments[2]) { _ in
            steps += 1
            if steps == stop { kill(getpid(), SIGKILL) }
        }
        print("finished after \(steps) steps")
        exit(0)
    } catch {
        print("failed: \(error)")
        exit(5)
    }
}
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: TrellisStorageProcessHelper writer PATH SEED | reader PATH\n".utf8))
    exit(2)
}
let environment: StorageEnvironment
do {
    // TRELLIS_STORAGE_TEST_KEY: an encryption key as 128 hex characters (KillTests' encrypted run).
    var options = StorageEnvironment.Options()
    if let hex = ProcessInfo.processInfo.environment["TRELLIS_STORAGE_TEST_KEY"] {
        let characters = Array(hex.utf8)
        options.encryptionKey = stride(from: 0, to: characters.count - 1, by: 2).compactMap {
            UInt8(String(decoding: characters[$0...($0 + 1)], as: UTF8.self), radix: 16)
        }
    }
    environment = try StorageEnvironment(path: arguments[2], options: options)
} catch {
    FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
    exit(4)
}
do {
    if arguments[1] == "hold-reader" {
        let transaction = try environment.beginRead()
        FileHandle.standardOutput.write(Data("reading \(transaction.txnID)\n".utf8))
        while true { sleep(1) }
    }
    if arguments[1] == "hold-snapshot" && arguments.count == 4 {
        let transaction = try environment.beginRead()
        func digest() -> String {
            do {
                let cursor = try transaction.cursor(arguments[3])
                var hash: UInt64 = 0xCBF2_9CE4_8422_2325
                var entries = 0
                var more = try cursor.first()
                while more {
                    for byte in try cursor.key() + (try cursor.value()) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
                    entries += 1
                    more = try cursor.next()
                }
                return "\(entries):\(String(hash, radix: 16))"
            } catch {
                return "error \(error)"
            }
        }
        FileHandle.standardOutput.write(Data("reading \(transaction.txnID) \(digest())\n".utf8))
        while readLine() != nil {
            FileHandle.standardOutput.write(Data("digest \(digest())\n".utf8))
        }
        transaction.end()
        exit(0)
    }
    if arguments[1] == "writer" {
        var state = UInt64(arguments.count > 3 ? arguments[3] : "1") ?? 1
        while true {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 60) == 0 ? 6000 : Int((state >> 40) & 255)
            try environment.write { write in
                try write.createTree("counter")
                try write.createTree("log", order: .integer)
                let next = number(try write.get("counter", key: [0])) + 1
                try write.put("counter", key: [0], value: bytes(next))
                try write.put("log", key: bytes(next), value: [UInt8](repeating: UInt8(truncatingIfNeeded: next), count: length),
                              mode: .append)
            }
        }
    } else {
        while true {
            try environment.read { read in
                guard try read.info("counter") != nil else { return }
                let counter = number(try read.get("counter", key: [0]))
                let logged = try read.info("log")?.count ?? 0
                let cursor = try read.cursor("log")
                let last = try cursor.last() ? number(try cursor.key()) : 0
                if counter != logged || last != counter {
                    FileHandle.standardError.write(Data("partial commit: counter \(counter), \(logged) entries, last \(last)\n".utf8))
                    exit(3)
                }
            }
        }
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(5)
}
