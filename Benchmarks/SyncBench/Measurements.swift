import Foundation
import Synchronization
import Trellis
import TrellisSync

/// Nanoseconds on the monotonic clock (both clients live in this process, so one clock).
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func seconds(_ from: UInt64, _ to: UInt64) -> Double { Double(to - from) / 1e9 }

/// Writes `count` objects on `client` (half dogs, half people; each person with a link, a list
/// of two dogs, an embedded address and a list of one embedded address), `batch` objects per
/// write transaction. The seconds the writes took.
func writeObjects(_ client: BenchClient, count: Int, batch: Int) throws -> Double {
    let half = max(count / 2, 1)
    let dogIds = (0..<half).map { _ in ObjectId.generate() }
    let start = now()
    var written = 0
    while written < half {
        let end = min(written + max(batch / 2, 1), half)
        try client.run { realm in
            try realm.write {
                for i in written..<end {
                    let dog = BenchDog(value: ["_id": dogIds[i], "name": "dog \(i)", "age": i % 20])
                    let person = BenchPerson(value: ["name": "person \(i)"])
                    person.dog = dog
                    person.dogs.append(dog)
                    person.address = BenchAddress(value: ["street": "\(i) Main St", "city": "Oslo"])
                    person.previousAddresses.append(BenchAddress(value: ["street": "Old \(i)"]))
                    realm.add(person)
                    if i > 0, let previous = realm.object(ofType: BenchDog.self, forPrimaryKey: dogIds[i - 1]) {
                        person.dogs.append(previous)
                    }
                }
            }
        }
        written = end
    }
    return seconds(start, now())
}

/// Upload: `count` objects committed offline on a new client, then the time from reconnecting
/// until the server has acknowledged all of them.
struct UploadResult {
    var objects: Int
    var localWriteSeconds: Double
    var uploadSeconds: Double
    /// CPU microseconds per object the server and PostgreSQL spent on the upload (nil: not measured).
    var serverMicrosPerObject: Double?
    var postgresMicrosPerObject: Double?
}

func measureUpload(_ client: BenchClient, count: Int, batch: Int, serverPid: pid_t) async throws -> UploadResult {
    let session = try client.session
    session.suspend()
    let writeSeconds = try writeObjects(client, count: count, batch: batch)
    let before = CPUReading(serverPid: serverPid)
    let start = now()
    session.resume()
    try await session.wait(for: .upload)
    let uploadSeconds = seconds(start, now())
    let cpu = before.microsPerObject(until: CPUReading(serverPid: serverPid), objects: count)
    return UploadResult(objects: count, localWriteSeconds: writeSeconds, uploadSeconds: uploadSeconds,
                        serverMicrosPerObject: cpu.server, postgresMicrosPerObject: cpu.postgres)
}

/// Download: a new client with an empty file, from `Realm.asyncOpen` to the Realm handed over
/// with everything its subscriptions select.
func measureDownload(_ client: BenchClient, expected: Int) async throws -> Double {
    let start = now()
    try await client.asyncOpen()
    let elapsed = seconds(start, now())
    let counts = try client.run { [$0.objects(BenchDog.self).count, $0.objects(BenchPerson.self).count] }
    guard counts.reduce(0, +) == expected else {
        throw BenchError("the download brought \(counts[0]) dogs and \(counts[1]) people, not \(expected) objects")
    }
    return elapsed
}

/// Commit -> notification: `rounds` times, `writer` commits one `BenchPing` and the time until
/// `reader`'s notification block (on its queue) sees it is recorded. The first `warmUp` rounds
/// are not counted. Milliseconds per round.
///
/// Rounds start at least `interval` apart: the server slows a connection that sends more than
/// `--max-messages-per-second` (100; 20 before session 27) messages a second by holding its next message back, and a
/// writer committing again as soon as the last commit arrived sends one upload each ~5 ms, so
/// without a pace the figure would be that hold (~45 ms a round), not the latency.
func measureLatency(writer: BenchClient, reader: BenchClient, rounds: Int, warmUp: Int,
                    interval: Duration) async throws -> [Double] {
    let arrivals = Mutex<[Int: UInt64]>([:])
    let token = try reader.run { realm in
        realm.objects(BenchPing.self).observe { change in
            guard case .update(let pings, _, let insertions, _) = change else { return }
            let at = now()
            for index in insertions {
                let round = pings[index].round
                arrivals.withLock { $0[round] = at }
            }
        }
    }
    defer { try? reader.run { _ in token.invalidate() } }
    var latencies = [Double]()
    let clock = ContinuousClock()
    var nextStart = clock.now
    for round in 0..<(warmUp + rounds) {
        try await clock.sleep(until: nextStart)
        nextStart = clock.now + interval
        try writer.run { realm in try realm.write { realm.add(BenchPing(value: ["round": round])) } }
        let committed = now()
        // The arrival time is taken in the notification block, so this poll's interval does
        // not add to the figure.
        let deadline = committed + 30_000_000_000
        var arrived = arrivals.withLock { $0[round] }
        while arrived == nil {
            guard now() < deadline else {
                let local = try reader.run { $0.objects(BenchPing.self).where { $0.round == round }.count }
                throw BenchError("round \(round): no notification on \(reader.name) within 30 s (the object is "
                    + "\(local == 0 ? "not" : "") in its Realm; \(writer.name) \(try writer.session.connectionState), "
                    + "\(reader.name) \(try reader.session.connectionState))")
            }
            try await Task.sleep(for: .milliseconds(1))
            arrived = arrivals.withLock { $0[round] }
        }
        if round >= warmUp, let arrived { latencies.append(Double(Int64(bitPattern: arrived &- committed)) / 1e6) }
    }
    return latencies
}

/// The value below which `fraction` of `values` fall (nearest rank).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
