import Foundation
import Testing

/// What a test runs that takes a large share of a small machine: a broker and the hosts that
/// chat through it, a 3-node NATS cluster, a headless Chromium. Such tests take a shared gate
/// before they start, so that, however the run orders them, they never starve one another, and
/// at most two clusters run at once (``ClusterSlots``: on two cores, a cluster starting while
/// four others did took more than a minute to serve MQTT). Tests that run nothing heavy are not
/// held.
///
/// A test given its share runs on a thread of its own (``TestThreads``), not on one of the
/// concurrency pool's, which has a thread a core: the tests are synchronous and spend most of
/// their time waiting on the programs they run, so on the pool two of them would hold both its
/// threads while the machine idles. How many heavy tests run at once is the gate's to say.
///
/// Mark a suite (every test in it) or a test with `.heavy(.broker)` (a parameterized one over
/// ``BrokerKind`` too: its cluster's case takes a ``ClusterSlots`` slot as it starts one),
/// `.heavy(.cluster)` (a suite of clusters), `.heavy(.browser)` or `.heavy(.compiler)` (a test
/// that builds a package). Time limits (`.timeLimit`) do not go
/// with these marks: the time a test waits for its share would count against its limit. ``TestBroker``, ``TestCluster`` and ``Browser`` record an issue when made
/// in a test that did not say so.
struct Heavy: TestTrait, SuiteTrait, TestScoping {
    /// What a test runs, and its share of the gate.
    struct Load: Sendable, Equatable, CustomStringConvertible {
        let name: String
        let weight: Int

        /// A private mosquitto and the hosts of a test.
        static let broker = Load(name: "broker", weight: 1)
        /// A headless Chromium, and the server or broker it drives.
        static let browser = Load(name: "browser", weight: 1)
        /// A 3-node NATS cluster and the hosts on it.
        static let cluster = Load(name: "cluster", weight: 2)
        /// The Swift compiler building a package (a line, a copy of imhost): both cores.
        static let compiler = Load(name: "compiler", weight: 3)

        var description: String { name }
    }

    let load: Load
    var isRecursive: Bool { true }

    /// The gate's size: two clusters, or a compiler and a broker's test, or four tests of brokers
    /// or browsers.
    static let capacity = 4

    /// What the running test holds of the gate.
    @TaskLocal static var held: Load?

    /// Each test case waits for its share by itself, all of it at once: a suite holding a share
    /// while its tests wait for more would deadlock with another doing the same.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Heavy? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // The outermost mark takes the largest share any mark of the test asks for (its suite's,
        // its own); the others find it held.
        guard Self.held == nil else { return try await function() }
        let marks = [load] + test.traits.compactMap { ($0 as? Heavy)?.load }
        let need = marks.max { $0.weight < $1.weight } ?? load
        await HeavyGate.shared.acquire(need.weight)
        do {
            try await Self.$held.withValue(need) {
                try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
            }
        } catch {
            await HeavyGate.shared.release(need.weight)
            throw error
        }
        await HeavyGate.shared.release(need.weight)
    }

    /// Records an issue unless the running test holds at least `load`: a heavy test that took
    /// no share of the gate would starve others.
    static func require(_ load: Load, sourceLocation: SourceLocation = #_sourceLocation) {
        guard (held?.weight ?? 0) < load.weight else { return }
        Issue.record("this test runs a \(load) but is not marked .heavy(.\(load)) (nor its suite): mark it, so it takes its share of the machine",
                     sourceLocation: sourceLocation)
    }
}

extension Trait where Self == Heavy {
    /// The test (or every test of the suite) runs `load`: it waits for its share of the machine.
    static func heavy(_ load: Heavy.Load) -> Self { Heavy(load: load) }
}

/// The gate: a count of shares, given in the order they were asked for (a cluster waiting is
/// not passed by a stream of brokers' tests).
actor HeavyGate {
    static let shared = HeavyGate(capacity: Heavy.capacity)

    private var free: Int
    private var waiting: [(weight: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(capacity: Int) { free = capacity }

    func acquire(_ weight: Int) async {
        guard weight > 0 else { return }
        if waiting.isEmpty, free >= weight {
            free -= weight
            return
        }
        await withCheckedContinuation { waiting.append((weight, $0)) }
    }

    func release(_ weight: Int) {
        free += weight
        while let first = waiting.first, free >= first.weight {
            free -= first.weight
            waiting.removeFirst()
            first.continuation.resume()
        }
    }
}

/// Runs each job on a new thread: a heavy test's synchronous body blocks its thread while it
/// waits on the programs it runs, and the gate, not a pool of a thread a core, bounds how many do.
final class TestThreads: TaskExecutor {
    static let shared = TestThreads()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}

/// At most two 3-node clusters run at once, whatever tests start them: a test takes a slot as
/// its ``TestCluster`` starts and gives it back as it stops. A test waits for a slot on its own
/// thread, holding its share of ``HeavyGate`` (taken first, always: whoever holds a slot never
/// waits for the gate, so the two cannot deadlock). A test starts one cluster at most.
enum ClusterSlots {
    private static let slots = DispatchSemaphore(value: 2)

    static func take() { slots.wait() }
    static func give() { slots.signal() }
}
