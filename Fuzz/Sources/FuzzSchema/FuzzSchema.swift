import Foundation
import Trellis

/// The input is App Services JSON, as `trellis schema codegen --swift` reads it: chunks split by
/// a NUL byte, the first and every later odd-numbered one a collection `schema.json`, the others
/// `relationships.json` documents given to the schema before them (under its title). The reader
/// must give Swift source or a `Realm.Error`; a crash or a sanitizer report is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let chunks = UnsafeBufferPointer(start: bytes, count: count).split(separator: 0, omittingEmptySubsequences: false)
    var schemas = [Data]()
    var relationships = [String: Data]()
    for (index, chunk) in chunks.enumerated() {
        if index % 2 == 0 {
            schemas.append(Data(chunk))
        } else if let document = (try? JSONSerialization.jsonObject(with: schemas[schemas.count - 1])) as? [String: Any],
                  let title = document["title"] as? String
        {
            relationships[title] = Data(chunk)
        }
    }
    _ = try? AppServicesSchema.swiftModels(schemas: schemas, relationships: relationships,
                                           namespace: count % 3 == 0 ? "Models" : nil)
    return 0
}

// SwiftPM links an executable's entry point as `<Target>_main`; hand control to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("FuzzSchema_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzzSchema($0, $1) }
}
