import Foundation
import Testing
@testable import IMHost

@Suite("/why names every cause")
struct WhyTests {
    @Test("on the legacy page, a key no installed line registers says so first, then the legacy page")
    func legacyAndUnknownKey() throws {
        let workspace = try Workspace.standard()
        let result = try imhost(["chat", "im://chat?rootCateID=77&peer=zhao"], input: """
            /recv cars.offer {"id":"C1","model":"Model 3","year":2019,"price":86000,"mileage":42000}
            /why 1
            /quit
            """, in: workspace)
        #expect(result.stdout.contains("why #1 (cars.offer): no builder is registered for its key: no installed line registers it, or its line is not loaded; and the legacy page shows built-in messages only"), "\(result.stdout)")
    }

    @Test("a line turned off and the legacy page are both named, the line first; open --json says the same")
    func killedLine() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(of: #""killSwitch": { "lines": []"#, with: #""killSwitch": { "lines": ["house"]"#))
        let url = "im://chat?rootCateID=1&cateID=12&peer=zhao"
        let result = try imhost(["chat", url], input: """
            /recv house.listing {"id":"L1","title":"Sunny flat","price":1200,"area":50,"rooms":2}
            /why 1
            /quit
            """, in: workspace)
        let why = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("why #1") }.map(String.init), "\(result.stdout)")
        let line = try #require(why.range(of: "line 'house'")), legacy = try #require(why.range(of: "the legacy page shows built-in messages only"))
        #expect(line.lowerBound < legacy.lowerBound, "\(why)")
        let json = try pageMessages(workspace, url: url)
        #expect((json.first?["why"] as? String).map { why.hasSuffix($0) } == true, "\(json)")
    }

    @Test("on the legacy page, a line's card whose payload does not decode says so first, then the legacy page")
    func legacyAndUndecodable() throws {
        let workspace = try Workspace.standard()
        let url = "im://chat?rootCateID=77&peer=zhao"
        let result = try imhost(["chat", url], input: """
            /recv house.listing {"id":"L1","title":"Sunny flat"}
            /why 1
            /quit
            """, in: workspace)
        let why = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("why #1") }.map(String.init), "\(result.stdout)\(result.stderr)")
        let payload = try #require(why.range(of: "the payload does not decode: missing field 'price'"), "\(why)")
        let legacy = try #require(why.range(of: "the legacy page shows built-in messages only"), "\(why)")
        #expect(payload.lowerBound < legacy.lowerBound, "\(why)")
        let json = try pageMessages(workspace, url: url)
        #expect((json.first?["why"] as? String)?.contains("does not decode") == true, "\(json)")
    }
}
