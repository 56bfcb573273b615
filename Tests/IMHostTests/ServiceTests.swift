import Foundation
import Testing
@testable import IMHost
@_spi(Host) import IMKit

/// Records lifecycle calls, in order, across the services of one test.
final class LifecycleLog {
    var events: [String] = []
}

/// A service for lifecycle tests: named by its id, depending on what its subclass says.
class LoggingService: Service {
    class var id: String { "test.base" }
    class var dependencies: [String] { [] }
    // Only the .serialized suite below touches it, one test at a time.
    nonisolated(unsafe) static var log = LifecycleLog()
    var dependencySeen: [String: Bool] = [:]

    required init() {}
    func prepare(in user: UserContext) throws { Self.log.events.append("prepare \(Self.id)") }
    func initialize(in user: UserContext) throws {
        for dependency in Self.dependencies { dependencySeen[dependency] = user.service(id: dependency) != nil }
        Self.log.events.append("initialize \(Self.id)")
    }
    func online() { Self.log.events.append("online \(Self.id)") }
    func offline() { Self.log.events.append("offline \(Self.id)") }
    func finalize() { Self.log.events.append("finalize \(Self.id)") }
}

final class Storage: LoggingService {
    override class var id: String { "test.storage" }
}

final class Network: LoggingService {
    override class var id: String { "test.network" }
    override class var dependencies: [String] { ["test.storage"] }
}

final class Feed: LoggingService {
    override class var id: String { "test.feed" }
    override class var dependencies: [String] { ["test.network", "test.storage"] }
}

final class Broken: LoggingService {
    override class var id: String { "test.broken" }
    struct Down: Error, CustomStringConvertible { var description: String { "disk full" } }
    override func prepare(in user: UserContext) throws { throw Down() }
}

final class NeedsBroken: LoggingService {
    override class var id: String { "test.needs-broken" }
    override class var dependencies: [String] { ["test.broken"] }
}

@Suite("Services and the user context", .serialized)
struct ServiceTests {
    func registrations(_ types: [LoggingService.Type]) -> [ServiceRegistration] {
        types.map { ServiceRegistration($0, line: "test") }
    }

    /// A signed-in user's services, as the host starts them (without breadcrumbs).
    func session(_ registrations: [ServiceRegistration]) -> UserSession {
        let session = UserSession(user: "alice", transport: .unconnected, guard: LineGuard(breadcrumb: nil)) { _ in nil }
        session.start(registrations)
        return session
    }

    @Test("built in dependency order, whatever the registration order; finalized in reverse")
    func lifecycleOrder() {
        LoggingService.log = LifecycleLog()
        let session = session(registrations([Feed.self, Network.self, Storage.self]))
        session.setOnline(true)
        session.setOnline(false)
        session.setOnline(true)
        session.finalize()
        #expect(LoggingService.log.events == [
            "prepare test.storage", "prepare test.network", "prepare test.feed",
            "initialize test.storage", "initialize test.network", "initialize test.feed",
            "online test.storage", "online test.network", "online test.feed",
            "offline test.feed", "offline test.network", "offline test.storage",
            "online test.storage", "online test.network", "online test.feed",
            "offline test.feed", "offline test.network", "offline test.storage",
            "finalize test.feed", "finalize test.network", "finalize test.storage",
        ])
        #expect(session.context.service(id: "test.feed") == nil, "finalized services are dropped")
    }

    @Test("initialize sees its dependencies already in the context")
    func dependenciesVisible() throws {
        LoggingService.log = LifecycleLog()
        let session = session(registrations([Feed.self, Network.self, Storage.self]))
        let feed = try #require(session.context.service(Feed.self))
        #expect(feed.dependencySeen == ["test.network": true, "test.storage": true])
        #expect(session.context.service(conformingTo: LoggingService.self) != nil)
    }

    @Test("a cycle and a missing dependency are refused, naming the cycle or the missing service")
    func cyclesAndMissing() {
        final class A: LoggingService {
            override class var id: String { "test.a" }
            override class var dependencies: [String] { ["test.b"] }
        }
        final class B: LoggingService {
            override class var id: String { "test.b" }
            override class var dependencies: [String] { ["test.c"] }
        }
        final class C: LoggingService {
            override class var id: String { "test.c" }
            override class var dependencies: [String] { ["test.a"] }
        }
        final class Lonely: LoggingService {
            override class var id: String { "test.lonely" }
            override class var dependencies: [String] { ["test.nowhere"] }
        }
        #expect(throws: ServiceError(.cycle, "services depend on each other in a cycle: test.a → test.b → test.c → test.a; break the cycle")) {
            try ServiceRegistration.buildOrder(registrations([A.self, B.self, C.self])).get()
        }
        #expect(throws: ServiceError(.missingDependency, "service 'test.lonely' depends on 'test.nowhere', which is not registered; register it, or remove it from dependencies")) {
            try ServiceRegistration.buildOrder(registrations([Lonely.self])).get()
        }
        #expect(PluginImage.checkDependencies(of: registrations([Lonely.self]), line: "test")
                == "service 'test.lonely' depends on 'test.nowhere', which is not a service of the host or of line 'test'; register it, or remove it from dependencies")
    }

    @Test("a service that fails to start is reported, and so is what depends on it; the rest run")
    func failingService() {
        LoggingService.log = LifecycleLog()
        let session = session(registrations([Storage.self, Broken.self, NeedsBroken.self]))
        #expect(session.problems == [
            "service 'test.broken' (line 'test') failed to prepare: disk full",
            "service 'test.needs-broken' (line 'test') is not started: it depends on 'test.broken', which failed",
        ])
        #expect(session.context.service(Storage.self) != nil)
        #expect(session.context.service(id: "test.needs-broken") == nil)
    }

    @Test("looking up an absent service gives nil or a clear error, never a crash")
    func absentLookup() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        try host.signIn()
        #expect(host.user?.service(id: "cars.inventory") == nil)
        #expect(host.user?.service(Feed.self) == nil)
        #expect(throws: ServiceError(.missing, "service 'test.feed' is not available for user 'me'; declare it in dependencies, and check its line is loaded")) {
            try host.user!.require(Feed.self)
        }
        #expect(host.user?.service(id: "house.listings") == nil, "a line's services start when the line is first used")
        #expect(host.user?.service(id: "host.transport") != nil)
        _ = try host.open(houseURL)
        #expect(host.user?.service(id: "house.listings") != nil)
    }

    @Test("switching user finalizes the old user's services first; nothing crosses users")
    func switchUser() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let page = try host.open("im://chat?rootCateID=1&peer=u42")
        try page.receive(key: "house.listing", payload: MessagePayload(json: #"{"area":30,"id":"L555","price":900,"rooms":1,"title":"Alice's find"}"#))
        #expect(try page.tap(1) == .handled("opened listing L555 detail: Alice's find, ¥900, 1 rooms"))
        let before = try #require(host.user?.service(id: "house.listings"))

        try host.switchUser(to: "bob")
        #expect(host.userID == "bob")
        let after = try #require(host.user?.service(id: "house.listings"))
        #expect(before !== after)
        #expect(throws: ChatHost.OpenError(kind: .failed, description: "refused: house://listing/:id could not open house://listing/L555: no listing L555 is known; it may have been taken down")) {
            try host.open(route: "house://listing/L555")
        }
        #expect(try #require(host.store).count(of: "u42") == 0, "bob does not see alice's conversation")
    }
}

@Suite("Routes")
struct RouteTests {
    @Test("routes match with path and query parameters; literals beat parameters")
    func matching() throws {
        var table = RouteTable()
        func add(_ pattern: String, _ name: String) throws {
            let parsed = try RoutePattern.parse(pattern).get()
            table.add(RouteTable.Route(pattern: parsed, allowExternal: true, line: "t", handler: { _ in name }))
        }
        try add("shop://item/:id", "item")
        try add("shop://item/new", "new")
        try add("shop://item/:id/reviews/:page", "reviews")
        func name(_ url: String) throws -> String? {
            guard let match = table.match(url) else { return nil }
            return try match.route.handler(RouteRequest(url: url, parameters: match.parameters, isExternal: false, user: UserContext(userID: "me", transport: .unconnected)))
                + " " + match.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        #expect(try name("shop://item/42?ref=push") == "item id=42,ref=push")
        #expect(try name("shop://item/new") == "new ")
        #expect(try name("shop://item/%E4%B8%AD/reviews/2") == "reviews id=中,page=2")
        #expect(try name("shop://item") == nil)
        #expect(try name("shop://other/1") == nil)
    }

    @Test("malformed patterns are refused with the reason")
    func patterns() {
        #expect(throws: RegistrationError(.invalid, "route pattern 'listing/:id' has no scheme; write it like 'house://listing/:id'")) {
            try RoutePattern.parse("listing/:id").get()
        }
        #expect(throws: RegistrationError(.invalid, "route pattern 'a://b/:x/:x' repeats or omits a parameter name; write it like 'house://listing/:id'")) {
            try RoutePattern.parse("a://b/:x/:x").get()
        }
    }

    @Test("real lines: parameters, external refusal, not-found, and another line's scheme refused")
    func realRoutes() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.install("FixtureRouteClash", as: "zz-clash.so")
        try workspace.install("FixtureServiceCycle", as: "loop.so")
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""jobs": { "enabled": true } }"#, with: #""jobs": { "enabled": true }, "clash": {}, "loop": {} }"#))
        let host = try workspace.host()

        guard case .opened(let detail) = try host.open(route: "house://listing/L1002", external: true) else {
            Issue.record("expected the listing route to open")
            return
        }
        #expect(detail == "listing L1002 detail: 望京一居 Wangjing studio, ¥3100, 1 rooms")
        #expect(throws: ChatHost.OpenError(kind: .external, description: "refused: jobs://interview/:id/answer (line 'jobs') is internal and cannot be opened from outside the app")) {
            try host.open(route: "jobs://interview/7/answer", external: true)
        }
        guard case .opened(let form) = try host.open(route: "jobs://interview/7/answer") else {
            Issue.record("expected the internal route to open from inside")
            return
        }
        #expect(form == "answer form for interview 7")
        #expect(throws: ChatHost.OpenError(kind: .notFound, description: "not found: no route matches boats://offer/1; check the URL, or load the line that handles it")) {
            try host.open(route: "boats://offer/1")
        }

        let clash = try #require(host.lines.status(ofLine: "clash"))
        #expect(clash.state == .failed)
        #expect(clash.problem?.reason == "registration failed: line 'clash' registered route 'house://listing/:other'; a line's routes use its own scheme. Write it as 'clash://listing/:other'")
        let loop = try #require(host.lines.status(ofLine: "loop"))
        #expect(loop.state == .failed)
        #expect(loop.problem?.reason == "registration failed: services depend on each other in a cycle: loop.first → loop.second → loop.first; break the cycle")
        try host.signIn()
        #expect(host.user?.service(id: "loop.first") == nil)

        // Line pages are routes: the converter's rewritten URL, and the kill switch applies to it.
        guard case .page(let page) = try host.open(route: "im://chat/house?rootCateID=1&peer=u9") else {
            Issue.record("expected a chat page")
            return
        }
        #expect(page.lineID == "house")
        var config = host.config
        config.killSwitch.lines = ["house"]
        host.apply(config)
        guard case .page(let killed) = try host.open(route: "im://chat/house?rootCateID=1&peer=u9", external: true) else {
            Issue.record("expected a chat page")
            return
        }
        #expect(killed.isLegacy)
        #expect(killed.decision.explanation == "the URL names line 'house', but line 'house' is in killSwitch.lines: legacy page")
    }

    @Test("imhost plugins lists each line's services and routes; imhost open exits 1 on refusal")
    func commands() throws {
        let workspace = try Workspace.standard()
        let plugins = try imhost(["plugins"], in: workspace)
        #expect(plugins.stdout.contains("    services: house.listings\n    routes: house://listing/:id\n"))
        #expect(plugins.stdout.contains("    routes: jobs://interview/:id/answer\n"))
        let opened = try imhost(["open", "house://listing/L1001", "--external"], in: workspace)
        #expect(opened.status == 0)
        #expect(opened.stdout == "opened listing L1001 detail: 阳光两居室 Sunny 2-room flat, ¥4200, 2 rooms\n")
        let refused = try imhost(["open", "jobs://interview/1/answer", "--external"], in: workspace)
        #expect(refused.status == 1)
        #expect(refused.stderr == "imhost open: refused: jobs://interview/:id/answer (line 'jobs') is internal and cannot be opened from outside the app\n")
    }
}

@Suite("Without a transport")
struct OfflineTests {
    @Test("without a transport what is sent stays queued, across restarts; /offline and /online say why, once a store")
    func queuedWithoutTransport() throws {
        let workspace = try Workspace.standard()
        let url = "im://chat?rootCateID=9&cateID=12&peer=recruiter"
        let first = try imhost(["chat", url], input: "/offline\nfirst\nsecond\n/online\n/quit\n", in: workspace)
        #expect(first.stderr == noTransportNotice)
        #expect(first.stdout.contains("/offline: there is no transport in host.json: nothing is sent anywhere, and your messages stay queued; add \"transport\" to chat with others"))
        #expect(first.stdout.contains("/online: there is no transport in host.json"))
        #expect(first.stdout.contains("#1 me · ") && first.stdout.components(separatedBy: " · queued").count - 1 >= 2)

        let restarted = try imhost(["chat", url], input: "/why 2\n", in: workspace)
        #expect(restarted.stderr.isEmpty, "said once")
        #expect(restarted.stdout.contains("#2 me · ") && restarted.stdout.contains("  state: queued"))
        #expect(try MessageStore(dataFolder: workspace.data, user: "me").queuedCount() == 2, "both wait in the outbox")
    }
}
