import Foundation
import Testing
@testable import IMHost

@Suite("Scenarios of several people, through a broker play starts")
struct ScenarioPeopleTests {
    @Test("imhost demo two-people: a card drawn by the receiver's plugins, a read receipt, an offline return, a reply, a recall and a voice message, bob booking a viewing on alice's card (it changes on both pages), the operator killing house fleet-wide and lifting it; the same transcript every run")
    func demo() throws {
        let workspace = try Workspace.standard()
        let first = try imhost(["demo", "two-people"], in: workspace)
        #expect(first.status == 0, "\(first.stderr)")
        for shown in ["── 8. bob: await ✓", "(line house turned off)", "why #1 (house.listing): line 'house' is in killSwitch.lines",
                      "│ 🏠 阳光两居室 Sunny 2-room flat ", "#2 me · 09:01 · read ✓✓", "#3 me · 09:02 · delivered ✓",
                      "── 25. bob: /reply 3 Sunday at 10 suits me.", "│ ↪ #3 you: \"Or Sunday, if that suits you better.\" │",
                      "recalled #5: gone from this chat, your devices and bob's; it said: The door code is 4711.",
                      "│ (alice recalled this message) │", "── 32. bob: /voice hello.webm", "│ [Voice 0:03] │",
                      "── 35. bob: /tap 1 viewing day=2026-12-05 time=10:00\n   → tap #1 viewing: booked a viewing of listing L1001 (阳光两居室 Sunny 2-room flat) on 2026-12-05 at 10:00",
                      "── 37. alice: await ✓ shows \"● Viewing booked\"",
                      "── 39. operator: imhost fleet kill house\n   → published: line house off; alice and bob applied it",
                      "── 42. bob: expect ✓ legacy page", "── 46. bob: expect ✓ house page", "47 steps passed."] {
            #expect(first.stdout.contains(shown), "\(shown)")
        }
        let second = try imhost(["demo", "two-people"], in: workspace)
        #expect(second.stdout == first.stdout, "a scenario waits on arrivals, never on time: it repeats exactly")
        // The broker it started is gone with it.
        #expect(try run("/usr/bin/pgrep", ["-f", "imhost-play-\(getpid())"]).stdout.isEmpty)
    }

    @Test("each user has its own host.json: what one sends is drawn by the other's lines")
    func ownHosts() throws {
        let workspace = try Workspace.standard()
        try FileManager.default.createDirectory(atPath: workspace.root + "/bob", withIntermediateDirectories: false)
        try Workspace.standardConfig.replacingOccurrences(of: #""user": "me","#, with: "")
            .replacingOccurrences(of: #""house": { "enabled": true }"#, with: #""house": { "enabled": false }"#)
            .replacingOccurrences(of: #""plugins": "Plugins""#, with: #""plugins": "../Plugins""#)
            .write(toFile: workspace.root + "/bob/host.json", atomically: true, encoding: .utf8)
        try #"""
        { "users": { "alice": "host.json", "bob": "bob/host.json" },
          "steps": [
            { "as": "bob", "open": "im://chat?rootCateID=1&cateID=12&peer=alice" },
            { "as": "alice", "open": "im://chat?rootCateID=1&cateID=12&peer=bob" },
            { "as": "alice", "send": "house.listing", "payload": { "id": "L1", "title": "Flat", "price": 1, "area": 2, "rooms": 1 } },
            { "as": "bob", "await": { "contains": ["Unsupported message type"], "stored": 1 } },
            { "as": "bob", "expect": { "page": "legacy" } },
            { "as": "alice", "await": "delivered ✓" },
            { "as": "alice", "expect": { "page": "house", "contains": ["🏠 Flat"] } }
          ] }
        """#.write(toFile: workspace.root + "/people.json", atomically: true, encoding: .utf8)
        let result = try imhost(["play", "people.json"], in: workspace)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("7 steps passed."))
    }

    @Test("a step as someone the scenario does not name, an await with nobody to wait for, or a fleet step that cannot run is refused in one line")
    func refused() throws {
        let workspace = try Workspace.standard()
        try #"{ "users": ["alice"], "steps": [ { "as": "carol", "show": true } ] }"#.write(toFile: workspace.root + "/a.json", atomically: true, encoding: .utf8)
        let stranger = try imhost(["play", "a.json"], in: workspace)
        #expect(stranger.status == 2 && stranger.stderr.contains("\"carol\" is not one of the scenario's users (alice)"), "\(stranger.stderr)")
        #expect(stranger.stderr.split(separator: "\n").count == 1)
        try #"[ { "await": "x" } ]"#.write(toFile: workspace.root + "/b.json", atomically: true, encoding: .utf8)
        let alone = try imhost(["play", "b.json"], in: workspace)
        #expect(alone.status == 2 && alone.stderr.contains("\"await\" waits for what another user sends: it needs the scenario's users"), "\(alone.stderr)")
        try #"{ "users": ["alice", "a/b"], "steps": [] }"#.write(toFile: workspace.root + "/c.json", atomically: true, encoding: .utf8)
        #expect(try imhost(["play", "c.json"], in: workspace).status == 2)
        // The operator's fleet steps: through the scenario's broker, as nobody else.
        for (steps, said) in [(#"[ { "fleet": "kill house" } ]"#, "\"fleet\" is the operator's change through the scenario's broker: it needs the scenario's users"),
                              (#"{ "users": ["alice"], "steps": [ { "as": "alice", "fleet": "kill house" } ] }"#, "\"fleet\" is the operator's: it takes no \"as\""),
                              (#"{ "users": ["alice"], "steps": [ { "fleet": "kill" } ] }"#, "kill takes one line id, got 0 arguments"),
                              (#"{ "users": ["alice"], "steps": [ { "fleet": "status" } ] }"#, "a fleet step changes the configuration")] {
            try steps.write(toFile: workspace.root + "/f.json", atomically: true, encoding: .utf8)
            let result = try imhost(["play", "f.json"], in: workspace)
            #expect(result.status == 2 && result.stderr.contains(said) && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }

    @Test("an await whose message never comes fails the run, naming the step and what the page lacks")
    func awaitFails() throws {
        let workspace = try Workspace.standard()
        try #"""
        { "users": ["alice", "bob"],
          "steps": [ { "as": "bob", "open": "im://chat?rootCateID=1&cateID=12&peer=alice" },
                     { "as": "bob", "await": "nobody sends this" } ] }
        """#.write(toFile: workspace.root + "/wait.json", atomically: true, encoding: .utf8)
        let result = try imhost(["play", "wait.json"], in: workspace)
        #expect(result.status == 1)
        #expect(result.stderr.contains("wait.json step 2 (line 3): waited 15 s: expected the page to show \"nobody sends this\""), "\(result.stderr)")
    }
}
