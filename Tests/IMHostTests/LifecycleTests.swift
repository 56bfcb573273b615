import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("Lifecycle: finalize, listing, enabling, the kill switch's reach")
struct LifecycleTests {
    @Test("services are finalized on a normal exit, on /quit, and on SIGTERM and SIGINT", arguments: ["end", "quit", "SIGTERM", "SIGINT"])
    func finalize(ending: String) throws {
        let workspace = try crashyWorkspace()
        let marker = workspace.root + "/finalized"
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", crashyURL], in: workspace.root,
                                      environment: ["IMHOST_CRASHY": "none:none", "IMHOST_CRASHY_FINALIZED": marker])
        #expect(chat.waitFor("[crashy page]"))
        switch ending {
        case "quit": chat.send("/quit")
        case "SIGTERM": chat.signal(SIGTERM)
        case "SIGINT": chat.signal(SIGINT)
        default: break
        }
        let result = chat.finish()
        let expected: Int32 = ["SIGTERM": 128 + SIGTERM, "SIGINT": 128 + SIGINT][ending] ?? 0
        #expect(result.status == expected, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: marker), "the line's service was finalized")
    }

    @Test("imhost plugins exits 1 when a configured, enabled line does not serve, --json too, and starts nothing to list")
    func pluginsExitCode() throws {
        let workspace = try crashyWorkspace()
        // A service that would crash if it were started: listing must not start it.
        let healthy = try imhost(["plugins", "--json"], in: workspace, environment: ["IMHOST_CRASHY": "service:abort"])
        #expect(healthy.status == 0, "\(healthy.stderr)")
        #expect(workspace.crashes.isEmpty)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(healthy.stdout.utf8)) as? [String: Any])
        #expect(report["notServing"] as? [String] == [])

        _ = try crashyChat(workspace, "route:abort", "/open crashy://boom\n")
        let text = try imhost(["plugins"], in: workspace)
        #expect(text.status == 1)
        #expect(text.stdout.contains("crashy.so            crashy       quarantined\n"))
        #expect(text.stdout.contains("Not serving: crashy (configured and enabled)"))
        let json = try imhost(["plugins", "--json"], in: workspace)
        #expect(json.status == 1)
        let failing = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(failing["notServing"] as? [String] == ["crashy"])

        // Killed and disabled lines are the operator's choice: not a failure.
        try workspace.writeConfig(crashyConfig(enabled: false))
        #expect(try imhost(["plugins"], in: workspace).status == 0)
    }

    @Test("a line enabled by editing host.json under a running chat serves and starts its services, warm or cold",
          arguments: ["warm", "cold"])
    func enableByReload(cache: String) throws {
        let workspace = try crashyWorkspace()
        try workspace.writeConfig(crashyConfig(house: false))
        if cache == "cold" { try FileManager.default.removeItem(atPath: workspace.plugins + "/house.so") }
        let chat = try RunningProcess(BuildProducts.imhost, ["chat", "im://chat?rootCateID=9&cateID=12&peer=hr"], in: workspace.root)
        #expect(chat.waitFor("[jobs page]"))
        if cache == "cold" { try workspace.install("House", as: "house.so") }
        try workspace.writeConfig(crashyConfig(house: true))
        chat.send("/reload")
        #expect(chat.waitFor("reloaded host.json"))
        chat.send("/open \(houseChatURL)")
        // The top post shows the listing's price only when house's listing service runs.
        #expect(chat.waitFor("¥4200 · 56 m² · 2 rooms"))
        let result = chat.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("[house page]"))
    }

    @Test("the kill switch reaches a line's builders on every page and its taps; lifted, they come back")
    func killSwitchReach() throws {
        let (workspace, host) = try pageHost()
        defer { withExtendedLifetime(workspace) {} }
        let jobs = try host.open(jobsURL)
        try jobs.receive(key: "house.listing", payload: MessagePayload(json: listingJSON))
        #expect(try jobs.presented(width: 72).first?.message.degrade == nil, "a house card roams into the jobs page")
        setKillSwitch(host, lines: ["house"])
        let killed = try host.open(jobsURL)
        #expect(!killed.isLegacy)
        #expect(try killed.presented(width: 72).first?.message.degrade == .lineUnavailable(line: "house", reason: .killed, why: "line 'house' is in killSwitch.lines"))
        #expect(try killed.tap(1) == .ignored, "a placeholder does nothing when tapped")
        #expect(try killed.render().contains("│ (line house turned off)"))
        #expect(try killed.render().contains("│ /why 1 says why"))
        setKillSwitch(host)
        #expect(try host.open(jobsURL).presented(width: 72).first?.message.degrade == nil)
    }
}
