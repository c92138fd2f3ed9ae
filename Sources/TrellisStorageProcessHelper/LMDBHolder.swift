import Foundation

/// Opens an LMDB file with the system's liblmdb, loaded at run time (`dlopen`), and keeps it
/// open until the process ends: LMDBUpgradeKillTests' "an LMDB process holds the old file".
/// Loaded, not linked, so that building the package (this helper is one of its executables)
/// needs no LMDB; only running that test does (Scripts/install-deps.sh --tests installs it).
enum LMDBHolder {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    // LMDB 0.9's flags (lmdb.h): open the file itself, not a folder, read-only.
    private static let noSubdirectory: UInt32 = 0x4000
    private static let readOnly: UInt32 = 0x20000

    private typealias EnvironmentCreate = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    private typealias EnvironmentOpen = @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UInt32, mode_t) -> Int32

    /// The environment stays open: nothing closes it before the process is killed.
    static func open(_ path: String) throws {
        let names = ["liblmdb.so.0", "liblmdb.so", "liblmdb.dylib"]
        guard let library = names.lazy.compactMap({ dlopen($0, RTLD_NOW) }).first else {
            throw Failure(description: "liblmdb not found (\(names.joined(separator: ", "))): install liblmdb-dev")
        }
        guard let createSymbol = dlsym(library, "mdb_env_create"), let openSymbol = dlsym(library, "mdb_env_open") else {
            throw Failure(description: "liblmdb lacks mdb_env_create or mdb_env_open")
        }
        let create = unsafeBitCast(createSymbol, to: EnvironmentCreate.self)
        let openEnvironment = unsafeBitCast(openSymbol, to: EnvironmentOpen.self)
        var environment: OpaquePointer?
        let created = create(&environment)
        guard created == 0 else { throw Failure(description: "mdb_env_create returned \(created)") }
        let opened = openEnvironment(environment, path, noSubdirectory | readOnly, 0o644)
        guard opened == 0 else { throw Failure(description: "mdb_env_open('\(path)') returned \(opened)") }
    }
}
