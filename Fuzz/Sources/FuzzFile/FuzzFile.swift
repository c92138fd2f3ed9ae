import Foundation
import Trellis

final class FuzzDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var owners: List<FuzzPerson>
}

final class FuzzPerson: Object {
    @Persisted var name = ""
    @Persisted var dog: FuzzDog?
    @Persisted var address: FuzzAddress?
    @Persisted(originProperty: "owners") var dogs: LinkingObjects<FuzzDog>
}

final class FuzzAddress: EmbeddedObject {
    @Persisted var street = ""
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-fuzz-\(getpid())")

/// Writes the input as a database file and opens it: a foreign or damaged file must give a
/// `Realm.Error`; a file that opens is read through.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFile(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent("input.realm")
    try? FileManager.default.removeItem(at: url)
    try? FileManager.default.removeItem(atPath: url.path + "-lock")
    try? Data(bytes: bytes, count: count).write(to: url)
    do {
        var configuration = Realm.Configuration(fileURL: url, objectTypes: [FuzzDog.self, FuzzPerson.self, FuzzAddress.self])
        configuration.readOnly = true
        configuration.maximumFileSize = 256 << 20
        guard let realm = try? Realm(configuration: configuration) else { return 0 }
        for dog in realm.objects(FuzzDog.self) { _ = dog.name.count + dog.owners.count }
        for person in realm.objects(FuzzPerson.self) { _ = (person.dog?.id ?? 0) + (person.address?.street.count ?? 0) }
    }
    return 0
}

/// With `TRELLIS_FUZZ_MAKE_SEED=<path>`, writes a valid file of this model there and exits: the
/// seed of the corpus (Scripts/fuzz.sh makes it when the corpus is empty).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let path = ProcessInfo.processInfo.environment["TRELLIS_FUZZ_MAKE_SEED"] else { return 0 }
    do {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                objectTypes: [FuzzDog.self, FuzzPerson.self, FuzzAddress.self])
        configuration.maximumFileSize = 256 << 20
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for index in 0..<3 {
                let person = FuzzPerson(value: ["name": "p\(index)", "address": ["street": "s\(index)"]])
                person.dog = FuzzDog(value: ["id": index, "name": "d\(index)"])
                person.dog?.owners.append(person)
                realm.add(person)
            }
        }
    } catch {
        print("could not write the seed: \(error)")
        exit(1)
    }
    exit(0)
}

// SwiftPM links an executable's entry point as `<Target>_main`; hand control to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32

@_cdecl("FuzzFile_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzzFile($0, $1) }
}
