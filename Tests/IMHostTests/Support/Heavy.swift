import Testing

/// What a test runs that takes a large share of a small machine: a broker and the hosts that
/// chat through it, a 3-node NATS cluster, a headless Chromium. Such tests take a shared gate
/// before they start, so that, however the run orders them, they never starve one another: two
/// clusters never start at once (on two cores, a cluster starting beside another took more than
/// a minute to serve MQTT), and a cluster shares the machine with one broker's test at most.
/// Tests that run nothing heavy are not held.
///
/// Mark a suite (every test in it) or a test with `.heavy(.broker)`, `.heavy(.cluster)` (a test
/// that may start a cluster, a parameterized one over ``BrokerKind`` included), `.heavy(.browser)`
/// or `.heavy(.compiler)` (a test that builds a package). Time limits (`.timeLimit`) do not go
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
        static let compiler = Load(name: "compiler", weight: 2)

        var description: String { name }
    }

    let load: Load
    var isRecursive: Bool { true }

    /// The gate's size: a cluster and a broker's test, or three tests of brokers or browsers.
    static let capacity = 3

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
            try await Self.$held.withValue(need) { try await function() }
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
