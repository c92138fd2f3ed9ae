import Foundation
import Testing
@testable import Trellis

// Code that reaches into `@Persisted` wrappers through raw pointers (binding an accessor's columns,
// telling an untouched collection when an object is added) relies on the wrapper's first fields
// lying at the same offsets whatever the value type is.

@Suite struct PersistedLayoutTests {
    private func expectFixedPrefix<Value: _Persistable>(_: Value.Type) {
        #expect(MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>._column) == 0, "\(Value.self)")
        #expect(MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>._field) == 4, "\(Value.self)")
        #expect(MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>._untouched)
            == Persisted<Value>.untouchedOffset, "\(Value.self)")
    }

    @Test func theWrappersFirstFieldsLieAtTheSameOffsetsForEveryValueType() {
        expectFixedPrefix(Bool.self)
        expectFixedPrefix(Int8.self)
        expectFixedPrefix(Int.self)
        expectFixedPrefix(String?.self)
        expectFixedPrefix(Decimal128.self)
        expectFixedPrefix(ObjectId.self)
        expectFixedPrefix(UUID?.self)
        expectFixedPrefix(AnyRealmValue.self)
        expectFixedPrefix(Dog?.self)
        expectFixedPrefix(List<Dog>.self)
        expectFixedPrefix(MutableSet<String>.self)
        expectFixedPrefix(Map<String, Dog?>.self)
        expectFixedPrefix(LinkingObjects<Dog>.self)
    }

    @Test func anUnmanagedCollectionIsUntouchedUntilReadOrWritten() throws {
        let person = ReuseOwner()
        let info = ClassInfo.unbound(for: ReuseOwner.self)
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(person).toOpaque())
        let pets = try #require(info.field(named: "pets"))
        let witness = pets.witness
        let untouchedBefore = witness.isUntouched(at: base + pets.offset)
        _ = person.pets.count  // a read makes the default, which is then the object's own
        let untouchedAfterRead = witness.isUntouched(at: base + pets.offset)
        #expect(untouchedBefore && !untouchedAfterRead)
        let written = ReuseOwner()
        written.pets = List<ReusePet>()
        let writtenBase = UnsafeMutableRawPointer(Unmanaged.passUnretained(written).toOpaque())
        let untouchedAfterWrite = witness.isUntouched(at: writtenBase + pets.offset)
        #expect(!untouchedAfterWrite)
        withExtendedLifetime(written) {}
        withExtendedLifetime(person) {}
    }
}
