// LMDB's page format and map: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import Foundation
import Testing
@testable import Trellis

/// Damage inside the B-trees of a file (which LMDB would follow into a memory fault) is found
/// by the structure check on open: a `corruptFile` error naming the damage, the file unchanged.
@Suite struct StructureCheckTests {
    let folder = TemporaryFolder()

    static let branchFlag: UInt16 = 0x01
    static let leafFlag: UInt16 = 0x02

    /// A closed file of `dogs` dogs (names long enough that the row tree has branch pages).
    func file(dogs: Int) throws -> (url: URL, pageSize: Int) {
        let url = folder.file("dogs.realm")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            try realm.write {
                for index in 0..<dogs {
                    let dog = Dog()
                    dog.name = "dog \(index) " + String(repeating: "x", count: 40)
                    dog.age = index
                    realm.add(dog)
                }
            }
        }
        guard case .header(let header) = FileHeader.inspect(path: url.path) else {
            throw Realm.Error(.fail, "no header")
        }
        return (url, header.pageSize)
    }

    /// Rewrites the file, changing every page with `flags` through `change(page, offset)`.
    func damagePages(_ url: URL, pageSize: Int, flags: UInt16, _ change: (inout Data, Int) -> Void) throws -> Int {
        var bytes = try Data(contentsOf: url)
        var changed = 0
        for offset in stride(from: 2 * pageSize, to: bytes.count, by: pageSize) {
            let pageFlags = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 10, as: UInt16.self) }
            guard pageFlags == flags else { continue }
            change(&bytes, offset)
            changed += 1
        }
        try bytes.write(to: url)
        return changed
    }

    func openError(_ url: URL) -> Realm.Error? {
        do {
            _ = try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
            return nil
        } catch {
            return error as? Realm.Error
        }
    }

    @Test func aSoundFileOpens() throws {
        let (url, _) = try file(dogs: 2_000)
        #expect(openError(url) == nil)
        #expect(TreeVerifier.damage(inFileAt: url.path) == nil)
    }

    @Test func aLeafPageNamingAnotherPageIsCorruptFile() throws {
        let (url, pageSize) = try file(dogs: 2_000)
        let changed = try damagePages(url, pageSize: pageSize, flags: Self.leafFlag) { bytes, offset in
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(999_999), toByteOffset: offset, as: UInt64.self) }
        }
        #expect(changed > 10)
        let before = try Data(contentsOf: url)
        let error = openError(url)
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("says it is page 999999") == true, "\(String(describing: error))")
        #expect(error?.message.contains("Restore it from a backup") == true)
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aBranchPointingOutsideTheFileIsCorruptFile() throws {
        let (url, pageSize) = try file(dogs: 2_000)
        let changed = try damagePages(url, pageSize: pageSize, flags: Self.branchFlag) { bytes, offset in
            // The first node's child page number: its low 32 bits, then the flags field's 16.
            let node = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 16, as: UInt16.self) })
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32.max, toByteOffset: offset + node, as: UInt32.self) }
        }
        #expect(changed >= 1)
        let error = openError(url)
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("outside the newest commit") == true, "\(String(describing: error))")
    }

    @Test func aNodeOffsetOutsideItsPageIsCorruptFile() throws {
        let (url, pageSize) = try file(dogs: 2_000)
        _ = try damagePages(url, pageSize: pageSize, flags: Self.leafFlag) { bytes, offset in
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt16(pageSize - 2), toByteOffset: offset + 16, as: UInt16.self) }
        }
        let error = openError(url)
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("outside its node space") == true, "\(String(describing: error))")
    }

    /// Changes every copy (the newest commit's and older pages') of the record of the database
    /// named `name` in the main tree, the 48 bytes after its key: `change(bytes, recordOffset)`.
    func damageRecord(_ url: URL, named name: String, _ change: (inout Data, Int) -> Void) throws {
        var bytes = try Data(contentsOf: url)
        // A main-tree node: data size 48, node flags F_SUBDATA, key size, then the key.
        var node = Data([48, 0, 0, 0, 2, 0, UInt8(name.utf8.count), 0])
        node.append(contentsOf: name.utf8)
        var start = bytes.startIndex
        while let found = bytes.range(of: node, in: start..<bytes.endIndex) {
            change(&bytes, found.upperBound)
            start = found.upperBound
        }
        #expect(start > bytes.startIndex, "no record of \(name)")
        try bytes.write(to: url)
    }

    /// LMDB keeps a record's unknown flags when it opens the database, then compares the record
    /// again in every later transaction: with MDB_VALID (0x8000) set, each read fails with
    /// MDB_INCOMPATIBLE (the file fuzzer's input stopped the process this way).
    @Test func aDatabaseRecordWithUnknownFlagsIsCorruptFile() throws {
        let (url, _) = try file(dogs: 20)
        try damageRecord(url, named: "t.Dog") { bytes, record in
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt16(0x8008), toByteOffset: record + 4, as: UInt16.self) }
        }
        let before = try Data(contentsOf: url)
        let error = openError(url)
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("gives a database the flags 32776, which Trellis never sets") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: url) == before)
    }

    /// MDB_REVERSEKEY: LMDB would search the rows in reverse byte order and miss them.
    @Test func aDatabaseRecordWithReverseKeysIsCorruptFile() throws {
        let (url, _) = try file(dogs: 20)
        try damageRecord(url, named: "t.Dog") { bytes, record in
            bytes[record + 4] |= 0x02
        }
        #expect(openError(url)?.code == .corruptFile)
    }

    @Test func aDatabaseRecordWithMorePagesThanTheFileIsCorruptFile() throws {
        let (url, _) = try file(dogs: 20)
        try damageRecord(url, named: "t.Dog") { bytes, record in
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt64.max, toByteOffset: record + 16, as: UInt64.self) }
        }
        let error = openError(url)
        #expect(error?.code == .corruptFile)
        #expect(error?.message.contains("more pages than the file holds") == true, "\(String(describing: error))")
    }

    /// With MDB_DUPSORT or MDB_INTEGERKEY on the main tree LMDB finds none of the databases.
    @Test func mainTreeFlagsInTheHeaderAreCorruptFile() throws {
        let (url, pageSize) = try file(dogs: 20)
        guard case .header(let header) = FileHeader.inspect(path: url.path) else {
            throw Realm.Error(.fail, "no header")
        }
        // The newest meta page (its transaction's parity), MDB_meta's main-tree md_flags.
        let meta = Int(header.transaction & 1) * pageSize
        for flags: UInt16 in [0x04, 0x08] {
            var bytes = try Data(contentsOf: url)
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: flags, toByteOffset: meta + 16 + 24 + 48 + 4, as: UInt16.self) }
            let damaged = folder.file("flags-\(flags).realm")
            try bytes.write(to: damaged)
            guard case .damaged(let reason) = FileHeader.inspect(path: damaged.path) else {
                Issue.record("flags \(flags) on the main tree were not seen")
                continue
            }
            #expect(reason.contains("gives the free-page and main trees the flags"))
            #expect(openError(damaged)?.code == .corruptFile)
        }
    }
}
#endif
