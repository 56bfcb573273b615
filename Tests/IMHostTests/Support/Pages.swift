import Foundation
import Testing
@testable import IMHost
import IMHostTerminal
@_spi(Host) import IMKit

extension ChatPage {
    /// The page as the terminal draws it.
    func render(width: Int = PageRenderer.defaultWidth, colors: Bool = false) throws -> String {
        try PageRenderer(width: width, colors: colors).render(self)
    }
}

/// A host over a workspace with house and jobs installed, a memory store and a fixed clock
/// that advances one minute a message.
func pageHost(killSwitch: String = #"{ "lines": [], "messages": [], "components": [] }"#) throws -> (Workspace, ChatHost) {
    let workspace = try Workspace()
    try workspace.installLines()
    try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
        of: #""killSwitch": { "lines": [], "messages": [], "components": [] }"#, with: "\"killSwitch\": \(killSwitch)"))
    let host = try workspace.host()
    var minute: Int64 = 0
    host.clock = {
        minute += 1
        return 1_795_000_000_000 + minute * 60_000
    }
    return (workspace, host)
}

/// Changes the kill switch as an operator would, by editing the configuration.
func setKillSwitch(_ host: ChatHost, lines: [String] = [], messages: [String] = [], components: ComponentSet = []) {
    var config = host.config
    config.killSwitch = HostConfig.KillSwitch(lines: lines, messages: messages, components: components)
    host.apply(config)
}

let houseURL = "im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001&title=%E9%98%B3%E5%85%89%E4%B8%A4%E5%B1%85%E5%AE%A4"
let jobsURL = "im://chat?rootCateID=9&cateID=13&peer=hr_li"

let listingJSON = #"{"area":56,"id":"L1001","price":4200,"rooms":2,"title":"阳光两居室 Sunny 2-room flat"}"#
let interviewJSON = #"{"company":"58 Tech","place":"Building A, 3F","position":"iOS engineer","time":"2026-11-25 10:00"}"#

/// Compares a rendering with a golden file in Tests/IMHostTests/Golden; with UPDATE_GOLDENS=1
/// it writes the file instead (then review the diff before committing).
func expectGolden(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let path = BuildProducts.repository + "/Tests/IMHostTests/Golden/" + name
    if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return
    }
    let golden = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text == golden, "rendering differs from Golden/\(name)", sourceLocation: sourceLocation)
}

extension Transport {
    /// A transport for contexts made outside a host: offline, and every send refused.
    static var unconnected: Transport {
        Transport(isOnline: false) { (_, _, _) throws(SendError) in
            throw SendError(.notStored, "this context has no connection")
        }
    }
}
