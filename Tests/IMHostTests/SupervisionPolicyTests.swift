import Foundation
import Testing
@testable import IMHostRuntime
@testable import IMHost

/// The supervisor's policies and the worker protocol, in process.
@Suite("Supervision: restarts, the watchdog and the worker protocol")
struct SupervisionPolicyTests {
    @Test("three restarts within the window are allowed, the fourth is not; old ones age out")
    func restarts() {
        var policy = RestartPolicy(burst: 3, window: 60_000)
        do { let seen = policy.allowsRestart(at: 1_000); #expect(seen) }
        do { let seen = policy.allowsRestart(at: 2_000); #expect(seen) }
        do { let seen = policy.allowsRestart(at: 3_000); #expect(seen) }
        do { let seen = policy.allowsRestart(at: 4_000); #expect(!seen, "a fourth crash within a minute stops") }
        #expect(policy.recent == 3)
        do { let seen = policy.allowsRestart(at: 61_500); #expect(seen, "the first restart aged out of the window") }
        var none = RestartPolicy(burst: 0, window: 60_000)
        do { let seen = none.allowsRestart(at: 0); #expect(!seen) }
    }

    @Test("a frame that does not move for the limit is a hang; one that moves, or host code, is not")
    func watchdog() {
        let second: UInt64 = 1_000_000_000
        var dog = Watchdog(seconds: 5)
        var now: UInt64 = 100 * second
        do { let seen = dog.isHung(depth: 1, sequence: 7, now: now); #expect(!seen) }
        // Looked at every 50 ms, the same frame for 4.9 s, then 5 s.
        for _ in 0..<98 {
            now += second / 20
            do { let seen = dog.isHung(depth: 1, sequence: 7, now: now); #expect(!seen) }
        }
        now += second / 10
        do { let seen = dog.isHung(depth: 1, sequence: 7, now: now); #expect(seen) }

        var moving = Watchdog(seconds: 5)
        for step in 0..<200 {
            do { let seen = moving.isHung(depth: 1, sequence: UInt32(step), now: UInt64(step) * second / 10); #expect(!seen) }
        }
        var host = Watchdog(seconds: 5)
        do { let seen = host.isHung(depth: 0, sequence: 1, now: 0); #expect(!seen) }
        do { let seen = host.isHung(depth: 0, sequence: 1, now: 60 * second); #expect(!seen, "no frame: the host's own code is never a hang") }
    }

    @Test("time the supervisor was stopped (Ctrl-Z) is not counted against the line")
    func stoppedTime() {
        let second: UInt64 = 1_000_000_000
        var dog = Watchdog(seconds: 5)
        do { let seen = dog.isHung(depth: 1, sequence: 3, now: 0); #expect(!seen) }
        do { let seen = dog.isHung(depth: 1, sequence: 3, now: 2 * second / 20); #expect(!seen) }
        // Stopped for ten minutes (the supervisor did not look), then looked at every 50 ms again.
        do { let seen = dog.isHung(depth: 1, sequence: 3, now: 600 * second); #expect(!seen) }
        var later = 600 * second
        while !dog.isHung(depth: 1, sequence: 3, now: later) { later += second / 20 }
        #expect(later - 600 * second >= 4 * second + second / 2, "the call still gets its five seconds of running time")
        #expect(later - 600 * second <= 5 * second)
    }

    @Test("every message of the worker protocol reads back as itself, and nothing else reads as one")
    func protocolRoundTrip() throws {
        let hold = Quarantine.Hold(CrashRecord(time: "2026-11-23T09:00:00Z", line: "cars", file: "cars.so", identity: nil, what: "builder",
                                               key: "cars.offer", message: "m1", signal: "SIGSEGV"), scope: .key)
        let resume = WorkerResume(url: "im://chat?rootCateID=1&peer=u1", window: 40, online: false, elsewhere: true,
                                  scenario: ScenarioProgress(killSwitch: .init(lines: ["house"], messages: [], components: ["topPost"]),
                                                             lastTap: "opened", minute: 3),
                                  quarantine: [hold])
        let toWorker: [ToWorker] = [.start(version: WorkerProtocol.version, resume: resume), .start(version: 2, resume: nil),
                                    .act(.text("/tap 1\nnot a second line"), draft: 7), .act(.tap(2, button: "accept")), .reload, .step(number: 12),
                                    .open(url: "im://chat?rootCateID=1&peer=u1")]
        for message in toWorker {
            let line = try JSONLines.encode(message)
            #expect(!line.contains(UInt8(ascii: "\n")), "one message, one line")
            #expect(try JSONDecoder().decode(ToWorker.self, from: Data(line)) == message)
        }
        let fromWorker: [FromWorker] = [.hello(version: WorkerProtocol.version), .ready(resume), .failed(reason: "expected x", resume: resume),
                                        .exiting(code: 3), .resume(resume), .replied(.tapped(number: 2, button: "accept", .handled("booked"))),
                                        .replied(.refused(ChatRefusal(.noSuchButton, "/tap", number: 2, component: "x", items: ["accept"])))]
        for message in fromWorker {
            #expect(try JSONDecoder().decode(FromWorker.self, from: Data(try JSONLines.encode(message))) == message)
        }
        for junk in [#"{"url":"im://chat"}"#, #""/reload""#, #"step 3"#, #"{"step":{}}"#, #"{"exiting":{"code":"3"}}"#] {
            #expect((try? JSONDecoder().decode(ToWorker.self, from: Data(junk.utf8))) == nil)
            #expect((try? JSONDecoder().decode(FromWorker.self, from: Data(junk.utf8))) == nil)
        }
    }

    @Test("every scanner report reads back as itself")
    func scannerReports() throws {
        let descriptor = PluginDescriptor(lineID: "house", displayName: "House", version: "1.0", swiftVersion: "6.3.1")
        let manifest = LineManifest(page: "HousePage", messageKeys: ["house.listing"], services: [], routes: [])
        let reports: [ScannerReport] = [
            .hello(version: ScannerReport.version),
            .step(file: "/p/house.so", stage: "load", line: nil, descriptor: nil,
                  identity: FileIdentity(device: 1, inode: 2, size: 3, modified: 4, changed: 5)),
            .step(file: "/p/house.so", stage: "register", line: "house", descriptor: descriptor, identity: nil),
            .done(file: "/p/house.so", descriptor: descriptor, manifest: manifest, refusal: nil),
            .done(file: "/p/x.so", descriptor: nil, manifest: nil, refusal: PluginRefusal(.noEntry, "no entry", fix: "add one")),
            .log(line: "house", level: "info", entry: "registered"),
        ]
        for report in reports {
            #expect(try JSONDecoder().decode(ScannerReport.self, from: Data(try JSONLines.encode(report))) == report)
        }
    }
}
