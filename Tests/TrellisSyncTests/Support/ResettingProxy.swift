import Foundation
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of a server port that can break every connection it
/// carries with a TCP reset on both sides, as a dropped network path or a NAT timeout does
/// (a client and the server then see a read error, not an orderly close). A tap, if given,
/// sees what each connection's client sends (one tap per connection, on its thread).
///
/// Every socket of the proxy is close-on-exec. Without it, a process the test process started
/// meanwhile (another test's `trellis-sync`, `psql`, `openssl`: the suites run in parallel and
/// `posix_spawn` passes on every descriptor not so marked) held a copy of the proxy's sockets,
/// so `resetAll()`'s close only dropped the proxy's reference: no reset, no end of stream, and
/// the client and the server both kept a connection that carried nothing until that process
/// exited (the "server logged no reset" failures of
/// `ConnectionFailureTests.aClientWhoseConnectionIsResetReconnectsAndKeepsSyncing`).
final class ResettingProxy: @unchecked Sendable {
    // @unchecked Sendable: the listening socket is set once; the connections are behind a Mutex.
    let port: Int
    private let listener: Int32
    private let target: Atomic<Int>
    private let resets = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let live = Atomic<Int>(0)
    private let makeTap: (@Sendable () -> any ProxyTap)?

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// New connections go to `port` from now on (a second server taking over).
    func retarget(to port: Int) { target.store(port, ordering: .relaxed) }

    /// The connections open through the proxy now.
    var openConnections: Int { live.load(ordering: .relaxed) }

    init(targetPort: Int, tap makeTap: (@Sendable () -> any ProxyTap)? = nil) throws {
        target = Atomic(targetPort)
        self.makeTap = makeTap
        let fd = socket(AF_INET, Self.streamCloseOnExec, 0)
        guard fd >= 0 else { throw ToolError(description: "proxy: socket() failed, errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw ToolError(description: "proxy: cannot listen on 127.0.0.1, errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Breaks every connection open now with a reset; later connections are carried again.
    func resetAll() { resets.add(1, ordering: .relaxed) }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    /// A TCP socket that no process started later inherits.
    private static let streamCloseOnExec = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)

    /// glibc's `accept4`, which Swift's Glibc module does not export (it needs `_GNU_SOURCE`):
    /// the accepted socket is close-on-exec from the start (an `fcntl` after `accept` would
    /// leave a moment in which a process started by another thread inherits it).
    private typealias Accept4 = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?,
                                                UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
    private static let acceptCloseOnExec: Accept4 = {
        guard let symbol = dlsym(nil, "accept4") else { preconditionFailure("glibc has no accept4") }
        return unsafeBitCast(symbol, to: Accept4.self)
    }()

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let client = Self.acceptCloseOnExec(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let upstream = socket(AF_INET, Self.streamCloseOnExec, 0)
            var address = Self.loopback(port: UInt16(target.load(ordering: .relaxed)))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(upstream)
                close(client)
                continue
            }
            let generation = resets.load(ordering: .relaxed)
            live.add(1, ordering: .relaxed)
            Thread.detachNewThread { [self] in
                pump(client, upstream, generation: generation)
                live.subtract(1, ordering: .relaxed)
            }
        }
    }

    /// Copies bytes both ways until both sides have closed, or until `resetAll()` is called:
    /// then both sockets are closed with SO_LINGER 0, which sends a TCP reset.
    private func pump(_ a: Int32, _ b: Int32, generation: Int) {
        var open = [a: true, b: true]
        let tap = makeTap?()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while open.values.contains(true) {
            if resets.load(ordering: .relaxed) != generation || stopped.load(ordering: .relaxed) {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                for fd in [a, b] {
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                    close(fd)
                }
                return
            }
            var fds = [pollfd(fd: a, events: open[a] == true ? Int16(POLLIN) : 0, revents: 0),
                       pollfd(fd: b, events: open[b] == true ? Int16(POLLIN) : 0, revents: 0)]
            guard poll(&fds, 2, 50) >= 0 || errno == EINTR else { break }
            for index in 0..<2 where fds[index].revents != 0 {
                let from = fds[index].fd, to = from == a ? b : a
                let count = read(from, &buffer, buffer.count)
                if count <= 0 {
                    open[from] = false
                    shutdown(to, Int32(SHUT_WR))
                    continue
                }
                if from == a { tap?.clientSent(buffer[0..<count]) }
                var written = 0
                while written < count {
                    let step = buffer[written..<count].withUnsafeBytes { write(to, $0.baseAddress, $0.count) }
                    if step <= 0 { break }
                    written += step
                }
            }
        }
        close(a)
        close(b)
    }
}

/// Sees the bytes a client sends through a ``ResettingProxy`` connection, in order.
protocol ProxyTap: AnyObject {
    func clientSent(_ bytes: ArraySlice<UInt8>)
}
