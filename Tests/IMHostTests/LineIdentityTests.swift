import Foundation
import Testing
@testable import IMHost
import IMKit

@Suite("Line identity: one file a line, pins and digests")
struct LineIdentityTests {
    /// house.so and a file sorting first that claims house's id.
    func impostor(pin: String = "") throws -> Workspace {
        let workspace = try Workspace()
        try workspace.installLines()
        try workspace.compileC("descriptor_plugin.c", as: "aaa.so", defines: ["LINE_ID=\"house\""])
        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""house": { "enabled": true }"#, with: #""house": { "enabled": true\#(pin) }"#))
        return workspace
    }

    @Test("two files claiming one line are both refused, in one line naming both; the line goes to the legacy page")
    func twoClaims() throws {
        let workspace = try impostor()
        let route = try imhost(["route", houseChatURL], in: workspace)
        #expect(route.status == 0)
        #expect(route.stdout.hasPrefix("page:   legacy page"))
        #expect(route.stdout.contains("reason: line-refused: "))
        #expect(route.stderr == "imhost: refused line 'house': line 'house' is claimed by 2 files: aaa.so, house.so; remove all but one, or pin the line's file in host.json (lines.house.file)\n")
        #expect(try imhost(["plugins"], in: workspace).status == 1)
    }

    @Test("host.json can pin a line's file: the other claimant is refused, the pinned one serves")
    func pinnedFile() throws {
        let workspace = try impostor(pin: #", "file": "house.so""#)
        let route = try imhost(["route", houseChatURL], in: workspace)
        #expect(route.stdout.hasPrefix("page:   house (HousePage)"))
        #expect(route.stderr == "imhost: refused aaa.so: claims line 'house', which host.json pins to house.so; remove this file, or change lines.house.file in host.json\n")

        try workspace.writeConfig(Workspace.standardConfig.replacingOccurrences(
            of: #""house": { "enabled": true }"#, with: #""house": { "enabled": true, "file": "house-v2.so" }"#))
        let missing = try imhost(["route", houseChatURL], in: workspace)
        #expect(missing.stdout.hasPrefix("page:   legacy page"))
        #expect(missing.stderr.contains("missing line 'house': host.json pins line 'house' to house-v2.so, which is not in \(workspace.plugins)"))
    }

    @Test("host.json can pin a line's SHA-256: a file with another digest is refused with both digests")
    func pinnedDigest() throws {
        let workspace = try Workspace()
        try workspace.installLines()
        let digest = try SHA256.hex(ofFile: workspace.plugins + "/house.so")
        func config(_ pin: String) -> String {
            Workspace.standardConfig.replacingOccurrences(of: #""house": { "enabled": true }"#, with: #""house": { "sha256": "\#(pin)" }"#)
        }
        try workspace.writeConfig(config(digest.uppercased()))
        let good = try imhost(["route", houseChatURL], in: workspace)
        #expect(good.stdout.hasPrefix("page:   house (HousePage)") && good.stderr.isEmpty)

        let wrong = String(repeating: "0", count: 64)
        try workspace.writeConfig(config(wrong))
        let bad = try imhost(["route", houseChatURL], in: workspace)
        #expect(bad.stdout.hasPrefix("page:   legacy page"))
        #expect(bad.stderr == "imhost: refused house.so: line 'house': its SHA-256 is \(digest), host.json pins \(wrong); install the file host.json pins, or update lines.house.sha256 to the new file's digest\n")

        try workspace.writeConfig(config("abc"))
        let malformed = try imhost(["route", houseChatURL], in: workspace)
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("lines.house.sha256: expected 64 hexadecimal digits, as sha256sum prints them"))
    }

    @Test("SHA-256 matches the published test vectors")
    func vectors() {
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("SHA-256 agrees with the system's sha256sum on every length around the block edges and on real plugins")
    func differential() throws {
        let workspace = try Workspace()
        var files = [BuildProducts.library("House"), BuildProducts.library("Jobs")]
        var generator = SeededGenerator(seed: 0x5A5A)
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 65_535, 65_536, 65_537, 200_003] {
            let path = workspace.root + "/random-\(length)"
            try Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        let system = try run("/usr/bin/sha256sum", files)
        #expect(system.status == 0)
        let expected = system.stdout.split(separator: "\n").map { String($0.prefix(64)) }
        #expect(try files.map { try SHA256.hex(ofFile: $0) } == expected)
    }
}

/// A small, seeded random number generator (SplitMix64), so fuzz and differential inputs repeat.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
