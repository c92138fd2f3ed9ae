import Foundation
import Trellis

final class FuzzPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight: Double?
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted(originProperty: "pets") var owners: LinkingObjects<FuzzOwner>
}

final class FuzzOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name: String?
    @Persisted var pet: FuzzPet?
    @Persisted var pets: List<FuzzPet>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var data: Data?
    @Persisted var flag = false
}

/// A small in-memory Realm the queries run against, made once.
nonisolated(unsafe) let realm: Realm = {
    var configuration = Realm.Configuration(inMemoryIdentifier: "fuzz-query", objectTypes: [FuzzOwner.self, FuzzPet.self])
    configuration.maximumFileSize = 64 << 20
    // swiftlint:disable:next force_try
    let realm = try! Realm(configuration: configuration)
    try? realm.write {
        for index in 0..<20 {
            let owner = FuzzOwner(value: ["id": index, "name": index % 3 == 0 ? nil : "owner \(index)", "flag": index % 2 == 0])
            owner.pet = FuzzPet(value: ["name": "pet \(index)", "age": index])
            owner.pets.append(objectsIn: (0..<index % 4).map { FuzzPet(value: ["name": "p\($0)", "age": $0]) })
            owner.tags.insert("t\(index % 5)")
            owner.scores["s\(index % 3)"] = index
            realm.add(owner)
        }
    }
    return realm
}()

/// Parses, checks and evaluates the input as a predicate on both classes. A bad predicate must
/// throw `Realm.Error`; anything else (a crash, a sanitizer report) is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQuery(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    if let owners = try? realm.objects(FuzzOwner.self).filter(validating: text) {
        _ = owners.count
        _ = owners.sorted(byKeyPath: "id", ascending: false).first
    }
    if let pets = try? realm.objects(FuzzPet.self).filter(validating: text) {
        _ = pets.count
    }
    return 0
}

// SwiftPM links an executable's entry point as `<Target>_main`; hand control to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("FuzzQuery_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzzQuery($0, $1) }
}
