import Foundation
import Trellis

final class FuzzTag: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0.0
}

final class FuzzSpot: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var tag: FuzzTag?
    @Persisted var corners: List<Int>
}

final class FuzzItem: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var ratio = 0.0
    @Persisted var small: Float = 0
    @Persisted var name: String?
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var amount = Decimal128(0)
    @Persisted var oid = ObjectId()
    @Persisted var blob: Data?
    @Persisted var uuid: UUID?
    @Persisted var done = false
    @Persisted var anything: AnyRealmValue
    @Persisted var tag: FuzzTag?
    @Persisted var tags: List<FuzzTag>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var scores: Map<String, Double>
    @Persisted var spot: FuzzSpot?
    @Persisted var spots: List<FuzzSpot>
}

let objectTypes: [ObjectBase.Type] = [FuzzItem.self, FuzzTag.self, FuzzSpot.self]

/// The typed import's Realm, in memory.
nonisolated(unsafe) let memoryRealm: Realm = {
    var configuration = Realm.Configuration(inMemoryIdentifier: "fuzz-ejson", objectTypes: objectTypes)
    configuration.maximumFileSize = 64 << 20
    // swiftlint:disable:next force_try
    return try! Realm(configuration: configuration)
}()

/// The file the stored-schema import (`trellis import`) writes, on a RAM disk when there is one;
/// a typed Realm keeps it open so every import reuses the loaded file.
let fileURL: URL = {
    let shm = URL(fileURLWithPath: "/dev/shm")
    let base = FileManager.default.fileExists(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
    let folder = base.appendingPathComponent("trellis-fuzz-ejson-\(getpid())")
    try? FileManager.default.removeItem(at: folder)
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("import.realm")
}()

nonisolated(unsafe) let fileRealm: Realm = {
    var configuration = Realm.Configuration(fileURL: fileURL, objectTypes: objectTypes)
    configuration.maximumFileSize = 256 << 20
    // swiftlint:disable:next force_try
    return try! Realm(configuration: configuration)
}()

nonisolated(unsafe) var runs = 0

/// The input is lines of Extended JSON documents, as in a `<Class>.json` file; a line that is
/// just a class name (`FuzzTag`, `FuzzItem`) says whose documents follow (`FuzzItem` at first).
/// An odd first byte imports through the stored schema into a file (what `trellis import`
/// does), an even one through the model classes into an in-memory Realm. A document that does
/// not fit must throw `Realm.Error`; a crash or a sanitizer report is a bug. After a stored
/// import that succeeded, the file must pass the consistency checker.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExtendedJSON(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard count > 0 else { return 0 }
    let stored = bytes[0] & 1 == 1
    let body = UnsafeBufferPointer(start: bytes + 1, count: count - 1)
    var documents = [String: [Data]]()
    var current = "FuzzItem"
    for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        if let name = String(bytes: line, encoding: .utf8), name.hasPrefix("Fuzz"), !name.contains("{") {
            current = name
        } else {
            documents[current, default: []].append(Data(line))
        }
    }
    runs += 1
    if stored {
        _ = fileRealm // made (and kept open) before the first import
        if (try? ExtendedJSON.importDocuments(documents, intoFile: fileURL, ignoringUnknownProperties: bytes[0] & 2 == 2)) != nil {
            fileRealm.refresh()
            let problems = fileRealm._consistencyProblems()
            if !problems.isEmpty { fatalError("an import left the file inconsistent: \(problems)") }
        }
        if runs % 256 == 0 { try? fileRealm.write { fileRealm.deleteAll() } }
    } else {
        try? ExtendedJSON.importDocuments(documents["FuzzTag"] ?? [], as: FuzzTag.self, into: memoryRealm)
        try? ExtendedJSON.importDocuments(documents["FuzzItem"] ?? [], as: FuzzItem.self, into: memoryRealm)
        for item in memoryRealm.objects(FuzzItem.self) {
            _ = try? ExtendedJSON.document(for: item)
        }
        if runs % 256 == 0 { try? memoryRealm.write { memoryRealm.deleteAll() } }
    }
    return 0
}

// SwiftPM links an executable's entry point as `<Target>_main`; hand control to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("FuzzExtendedJSON_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzzExtendedJSON($0, $1) }
}
