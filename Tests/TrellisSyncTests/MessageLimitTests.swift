import Foundation
import Logging
import Synchronization
import Testing
import TrellisSyncProtocol
import WSClient

/// No user-controlled work beyond linear (issue 36 item 4): list merges are linear plus a
/// bounded table, and a connection cannot make the server read a large message before its
/// token is checked.
struct MessageLimitTests {
    @Test func listMergeOfTwentyThousandElementsIsBoundedAndKeepsEveryInsertion() {
        let base = (0..<20_000).map { JSONValue.int(Int64($0)) }
        // The client reversed the list and added an element; meanwhile another client appended one.
        let local = base.reversed() + [JSONValue.string("mine")]
        let current = base + [JSONValue.string("theirs")]
        let merged = DocumentMerge.mergeList(current: current, base: base, local: Array(local))
        #expect(merged.contains(.string("mine")))
        #expect(merged.contains(.string("theirs")))
        #expect(Set(merged).count == merged.count)
        #expect(merged.count == base.count + 2)
        // Small lists still merge by longest common subsequence.
        let small = DocumentMerge.mergeList(current: [.int(1), .int(2), .int(3), .int(9)], base: [.int(1), .int(2), .int(3)],
                                            local: [.int(1), .int(5), .int(3)])
        #expect(small == [.int(1), .int(5), .int(3), .int(9)])
    }

    @Test func firstMessageLargerThanAHelloIsNotRead() async throws {
        let fixture = try SyncFixture(serverArguments: ["--max-message-bytes", String(4 << 20)])
        let closed = Mutex(false)
        let big = String(repeating: "x", count: 2 << 20)
        try await withTimeout(.seconds(30)) {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(fixture.server.port)/api/client/v2.0/app/trellis/realm-sync",
                                              configuration: .init(maxFrameSize: 8 << 20),
                                              logger: Logger(label: "raw")) { inbound, outbound, _ in
                try await outbound.write(.text(big))
                for try await _ in inbound.messages(maxSize: 1 << 20) {}
                closed.withLock { $0 = true }
            }
        }
        #expect(closed.withLock { $0 })
        #expect(fixture.server.log.contains("whose first message has \(2 << 20) bytes"))
    }
}
