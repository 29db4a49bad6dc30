import FaultlineCore
import Foundation
import Logging
import Pipeline
import Synchronization
import Testing

/// While the symbolication worker works off a backlog, the dashboard waits for it (at most `holdAtMost`) instead
/// of rendering every debounce: each render took CPU from the backlog.
@Suite struct RenderSchedulerTests {
    final class Renders: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
    }

    /// Polls `condition` for up to ~10 s.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    func scheduler(
        _ renders: Renders, holdWhile: @escaping @Sendable () -> Bool, holdAtMost: Duration
    ) -> RenderScheduler {
        RenderScheduler(
            render: { _, _ in
                renders.count.withLock { $0 += 1 }
                return RenderScheduler.Outcome(pages: 1, complete: true)
            }, clock: ManualClock(), debounce: .milliseconds(1), logger: Logger(label: "test"), holdWhile: holdWhile,
            holdAtMost: holdAtMost)
    }

    @Test func aChangeIsRenderedOnceTheBacklogIsDone() async {
        let renders = Renders()
        let behind = Atomic<Bool>(true)
        let running = scheduler(renders, holdWhile: { behind.load(ordering: .acquiring) }, holdAtMost: .seconds(600))
        let task = Task { try await running.run() }
        defer { task.cancel() }
        #expect(await eventually { renders.value == 1 })  // the full render at start
        running.notify()
        // Held: however long the backlog lasts (here, 30 polls of the flag), nothing is rendered.
        try? await Task.sleep(for: .milliseconds(300))
        #expect(renders.value == 1)
        behind.store(false, ordering: .releasing)
        // Done: the change is rendered.
        #expect(await eventually { renders.value == 2 })
    }

    @Test func aBacklogThatLastsDelaysARenderOnlyUpToTheBound() async {
        let renders = Renders()
        let running = scheduler(renders, holdWhile: { true }, holdAtMost: .milliseconds(50))
        let task = Task { try await running.run() }
        defer { task.cancel() }
        #expect(await eventually { renders.value == 1 })
        running.notify()
        #expect(await eventually { renders.value == 2 })
        running.notify()
        #expect(await eventually { renders.value == 3 })
    }
}
