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
}
