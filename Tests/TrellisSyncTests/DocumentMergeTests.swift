import Testing
import TrellisSyncProtocol

/// The merge rules as pure functions (no server): the cases the integration tests cannot
/// reach deterministically, such as equal clocks.
struct DocumentMergeTests {
    private func change(_ kind: SyncObjectChange.Kind, _ stamp: String, _ fields: [FieldChange]) -> SyncObjectChange {
        SyncObjectChange(className: "T", primaryKey: .string("1"), kind: kind, timestamp: stamp, fields: fields)
    }

    @Test func equalClocksAreBrokenByClientId() {
        let a = HybridTimestamp(milliseconds: 5, counter: 0, clientId: "a").description
        let b = HybridTimestamp(milliseconds: 5, counter: 0, clientId: "b").description
        var stored = DocumentMerge.Stored(document: ["x": .string("start")], timestamps: [:])
        // Whatever the arrival order, client "b" wins the tie.
        for order in [[a, b], [b, a]] {
            var result = stored
            for stamp in order {
                result = DocumentMerge.apply(change(.update, stamp, [.set(name: "x", value: .string(stamp))]),
                                             to: result, tombstone: nil) ?? result
            }
            #expect(result.document["x"] == .string(b))
        }
        stored.timestamps["x"] = b
        #expect(DocumentMerge.apply(change(.update, a, [.set(name: "x", value: .null)]), to: stored,
                                    tombstone: nil)?.document["x"] == .string("start"))
    }

    @Test func clockTextSortsAsTimestamps() {
        let early = HybridTimestamp(milliseconds: 999, counter: 12, clientId: "z")
        let late = HybridTimestamp(milliseconds: 1000, counter: 0, clientId: "a")
        #expect(early < late)
        #expect(early.description < late.description)
        #expect(HybridTimestamp(late.description) == late)
    }

    @Test func updateAfterDeleteIsDroppedButLaterInsertRecreates() {
        #expect(DocumentMerge.apply(change(.update, "2", [.set(name: "x", value: .int(1))]), to: nil,
                                    tombstone: "1") == nil)
        #expect(DocumentMerge.apply(change(.insert, "0", [.set(name: "x", value: .int(1))]), to: nil,
                                    tombstone: "1") == nil)
        #expect(DocumentMerge.apply(change(.insert, "2", [.set(name: "x", value: .int(1))]), to: nil,
                                    tombstone: "1")?.document["x"] == .int(1))
    }

    @Test func listMergeKeepsBothSidesInsertions() {
        let s: (String) -> JSONValue = { .string($0) }
        let base = [s("a"), s("b")]
        let current = [s("a"), s("x"), s("b")]  // another client inserted x
        let local = [s("a"), s("y"), s("b"), s("z")]
        let merged = DocumentMerge.mergeList(current: current, base: base, local: local)
        #expect(merged == [s("a"), s("x"), s("y"), s("b"), s("z")])
        // Removal of an element another client already removed is a no-op.
        #expect(DocumentMerge.mergeList(current: [s("a")], base: base, local: [s("a")]) == [s("a")])
    }
}
