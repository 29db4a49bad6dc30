import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A local webhook receiver: records every POST body and answers with the status `mode` says (so tests can
/// make it fail and then recover).
final class WebhookReceiver: Sendable {
    final class State: Sendable {
        let bodies = Mutex<[[UInt8]]>([])
        let failing = Mutex<Bool>(false)
    }
    let state = State()
    let port: Int
    private let task: Task<Void, any Error>

    init(failing: Bool = false) async throws {
        let state = self.state
        state.failing.withLock { $0 = failing }
        let router = Router()
        router.post("hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            state.bodies.withLock { $0.append(Array(body.readableBytesView)) }
            return state.failing.withLock { $0 } ? .serviceUnavailable : .ok
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "receiver"))
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = stream.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }
    var received: [[String: Any]] {
        state.bodies.withLock { $0 }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any]
        }
    }
    func setFailing(_ value: Bool) { state.failing.withLock { $0 = value } }
    func stop() { task.cancel() }
}

/// Polls `condition` until it holds or `timeout` × `waitMargin` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout * waitMargin
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}

/// How much longer than written every `eventually` waits. A wait is a margin for background work (grouping,
/// renders, webhooks), never a measurement: on CI's two cores under the whole suite the same work took minutes
/// where it takes seconds alone, and waits that held alone ran out there (CI at 58ffcc6). A longer wait only
/// delays the report of a real failure; what must not happen within a time is checked with sleeps, not here.
let waitMargin = 3
