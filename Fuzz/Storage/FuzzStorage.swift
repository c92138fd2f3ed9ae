import Foundation
import TrellisStorage

// libFuzzer target over TrellisStorage's file format (issue 35). Built by
// `bash Scripts/fuzz-storage.sh` with swiftc (not by SwiftPM: CI and `swift build` never build
// it). The input format and what counts as a finding: Tests/TrellisStorageTests/Support/
// Sources/TrellisStorageProcessHelper/StorageFuzzInput.swift, compiled into this program and
// into the helper that StorageFuzzRegressionTests runs.

let folder = "/dev/shm/trellis-fuzz-storage-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStorage(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    do {
        _ = try StorageFuzzInput.run(input, path: folder + "/data")
    } catch {
        fatalError("finding: \(error)")
    }
    return 0
}

/// Makes the folder; with `TRELLIS_FUZZ_STORAGE_MAKE_SEEDS=<dir>`, writes the seed inputs there
/// and exits.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>,
                       _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: "/dev/shm/trellis-fuzz-storage-\(getpid())") }
    guard let directory = ProcessInfo.processInfo.environment["TRELLIS_FUZZ_STORAGE_MAKE_SEEDS"] else { return 0 }
    do {
        try SeedFiles.write(to: directory, scratch: folder)
    } catch {
        print("could not write the seeds: \(error)")
        exit(1)
    }
    exit(0)
}

/// Small valid files: the corpus the fuzzer starts from.
enum SeedFiles {
    static func write(to directory: String, scratch: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let images: [(String, [UInt8])] = [
            ("new", try image(scratch, commits: 0, sealed: true)),
            ("trees-sealed", try image(scratch, commits: 2, sealed: true)),
            ("trees-open", try image(scratch, commits: 3, sealed: false)),
        ]
        for (name, bytes) in images {
            // The fixer must leave a sound file as it is, or the fuzzer would test its mistakes.
            guard StorageFuzzInput.decode([1] + bytes).image == bytes else {
                throw StorageFuzzInput.Finding(description: "the checksum fixer changes the sound seed '\(name)'")
            }
            for flags: UInt8 in [0, 1, 3] {
                let url = URL(fileURLWithPath: "\(directory)/\(name)-\(flags)")
                try Data([flags] + bytes).write(to: url)
            }
        }
    }

    /// A file after `commits` commits of a fixed workload, cut to its high-water mark.
    private static func image(_ scratch: String, commits: Int, sealed: Bool) throws -> [UInt8] {
        let path = scratch + "/seed"
        unlink(path)
        unlink(path + "-lock")
        var bytes: [UInt8] = []
        do {
            let environment = try StorageEnvironment(path: path)
            defer { environment.close() }
            for commit in 0..<commits {
                try environment.write { write in
                    try write.createTree("a")
                    try write.createTree("numbers", order: .integer)
                    try write.createTree("overflow")
                    try write.createTree("empty")
                    for index in 0..<30 {
                        try write.put("a", key: Array("k\(index)".utf8), value: Array("value \(index) of \(commit)".utf8))
                    }
                    // Two to three leaves under a branch.
                    for index in UInt64(0)..<330 where (Int(index) + commit) % 3 != 0 {
                        try write.put("numbers", key: withUnsafeBytes(of: index.littleEndian) { Array($0) }, value: [UInt8(truncatingIfNeeded: index)])
                    }
                    try write.put("overflow", key: Array("big\(commit % 2)".utf8), value: Array(repeating: UInt8(commit), count: 4100))
                    if commit == 2 { try write.deleteRange("a", from: Array("k2".utf8), to: Array("k4".utf8)) }
                }
            }
            if !sealed { bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path))) }
        }
        if sealed { bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path))) }
        unlink(path + "-lock")
        let highWater = bytes.withUnsafeBytes { buffer in
            max(buffer.loadUnaligned(fromByteOffset: 4096 + 24, as: UInt64.self),
                buffer.loadUnaligned(fromByteOffset: 8192 + 24, as: UInt64.self))
        }
        return Array(bytes.prefix(Int(highWater) * 4096))
    }
}
