import Foundation
import Testing
@testable import IMHost

/// The pictures the tests send: drawn by Chromium (canvas.toDataURL), a few kilobytes each.
enum PhotoFixtures {
    static let folder = BuildProducts.repository + "/Tests/Fixtures/Photos/"
    static func path(_ name: String) -> String { folder + name }
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name)))) }
    /// Each fixture, with its kind and size as the encoder that wrote it was asked for.
    static let all: [(name: String, kind: Photo.Kind, width: Int, height: Int)] = [
        ("flat.png", .png, 640, 400), ("tiny.png", .png, 1, 1), ("flat.jpg", .jpeg, 640, 400), ("wide.jpg", .jpeg, 1200, 90),
        ("flat.webp", .webp, 640, 400), ("lossless.webp", .webp, 300, 200), ("alpha.webp", .webp, 120, 90),
    ]
}

@Suite("Photos", .heavy(.broker))
struct PhotoTests {
    @Test("a picture's kind and size come from its bytes: PNG, JPEG, and WebP lossy, lossless and extended")
    func recognised() throws {
        for fixture in PhotoFixtures.all {
            let bytes = try PhotoFixtures.bytes(fixture.name)
            let photo = try Photo.read(bytes, limit: 1 << 20)
            #expect(photo == Photo(kind: fixture.kind, width: fixture.width, height: fixture.height, size: bytes.count), "\(fixture.name)")
        }
        // The name plays no part: a PNG called .jpg is a PNG.
        #expect(try Photo.read(try PhotoFixtures.bytes("flat.png"), limit: 1 << 20).kind == .png)
        // A phone's JPEG: a full EXIF block and an ICC profile before the header that says its size.
        let jpeg = try PhotoFixtures.bytes("flat.jpg")
        let exif: [UInt8] = [0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif\0\0".utf8) + [UInt8](repeating: 0x20, count: 65_533 - 6)
        let icc: [UInt8] = [0xFF, 0xE2, 0x03, 0xEA] + [UInt8](repeating: 0x11, count: 1_000)
        let phone = Array(jpeg.prefix(2)) + exif + icc + Array(jpeg.dropFirst(2))
        #expect(try Photo.read(phone, limit: 1 << 20) == Photo(kind: .jpeg, width: 640, height: 400, size: phone.count))
    }

    @Test("anything else is refused in one line that says what it is: another kind, text, nothing, a size no picture has, too many bytes")
    func refused() throws {
        func refusal(_ bytes: [UInt8], limit: Int = 1 << 20) -> String? {
            do throws(Photo.Refusal) { _ = try Photo.read(bytes, limit: limit); return nil } catch { return error.description }
        }
        #expect(refusal(Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)) == "it is not a PNG, JPEG or WebP picture (it is a GIF)")
        // What a file that is none of them holds is not said: it may be any file the user can read.
        #expect(refusal(Array("root:*:19000:0:99999:7:::\n".utf8)) == "it is not a PNG, JPEG or WebP picture")
        #expect(refusal([]) == "it is empty")
        let png = try PhotoFixtures.bytes("flat.png")
        #expect(refusal(png, limit: 1000) == "it is \(png.count) bytes; the limit is 1000 (limits.photoBytes in host.json)")
        // A header that says 0 wide, or 20,000 × 20,000 (400 million pixels a browser would decode).
        var zero = png
        zero.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        #expect(refusal(zero) == "its PNG header says it is 0×400 pixels")
        var huge = png
        huge.replaceSubrange(16..<24, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        #expect(refusal(huge) == "it is 20000×20000 pixels; the most is 16384 a side and 40 million in all")
        var jpeg = try PhotoFixtures.bytes("flat.jpg")
        jpeg.removeSubrange(2...)
        jpeg += [0xFF, 0xD9]
        #expect(refusal(jpeg) == "it starts as a JPEG but no frame header says its size")
        // What the file says is quoted as it is; each front end escapes it (sending, below).
        #expect(refusal(Self.hostileWebP) == "it is a WebP with a first chunk of \"\u{1B}[2J\", not VP8, VP8L or VP8X")
    }

    /// A WebP whose first chunk is named with a terminal's escape sequence.
    static let hostileWebP: [UInt8] = Array("RIFF".utf8) + [26, 0, 0, 0] + Array("WEBP".utf8) + [0x1B] + Array("[2J".utf8) + [UInt8](repeating: 0, count: 18)

    @Test("no prefix of a real picture, and no byte of it flipped, crashes the reader: each is a picture or a refusal")
    func damaged() throws {
        for fixture in PhotoFixtures.all {
            let bytes = try PhotoFixtures.bytes(fixture.name)
            var outcomes = 0
            for cut in stride(from: 0, through: min(bytes.count, 600), by: 1) {
                _ = try? Photo.read(bytes.prefix(cut), limit: 1 << 20)
                outcomes += 1
            }
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<500 {
                var flipped = bytes
                let at = Int.random(in: 0..<min(64, bytes.count), using: &generator)
                flipped[at] ^= UInt8.random(in: 1...255, using: &generator)
                _ = try? Photo.read(flipped, limit: 1 << 20)
                outcomes += 1
            }
            #expect(outcomes == min(bytes.count, 600) + 1 + 500)
        }
    }

    @Test("/photo sends a picture: stored apart from the payload and the search index, drawn as [Photo W×H]; a file that is not a picture and one too large are refused in one line each, and nothing is sent")
    func sending() throws {
        let workspace = try Workspace.standard()
        let large = workspace.root + "/large.png"
        // A PNG's first bytes, then more than the limit (1 MiB) of zeros.
        try Data(try PhotoFixtures.bytes("flat.png").prefix(64) + [UInt8](repeating: 0, count: 1 << 20)).write(to: URL(fileURLWithPath: large))
        let notes = workspace.root + "/notes.png"
        try "shopping: eggs, milk\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let hostile = workspace.root + "/hostile.webp"
        try Data(Self.hostileWebP).write(to: URL(fileURLWithPath: hostile))
        let url = "im://chat?rootCateID=1&cateID=12&peer=u42"
        let result = try imhost(["chat", url], input: "/photo \(PhotoFixtures.path("flat.png"))\n/photo \(notes)\n/photo \(large)\n/photo \(hostile)\n/quit\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("│ [Photo 640×400] │"), "\(result.stdout)")
        // What a command refuses is said where the chat's answers go, on one line each.
        #expect(result.stdout.contains("\n/photo: not sent: \(notes) is not a photo this host sends: it is not a PNG, JPEG or WebP picture\n"), "\(result.stdout)")
        #expect(result.stdout.contains("\n/photo: not sent: \(large) is larger than a photo may be: 1048576 bytes (limits.photoBytes in host.json)\n"), "\(result.stdout)")
        #expect(result.stdout.contains(#"/photo: not sent: \#(hostile) is not a photo this host sends: it is a WebP with a first chunk of "\x1b[2J", not VP8, VP8L or VP8X"# + "\n")
                && !result.stdout.contains("\u{1B}"), "what the file says reaches the terminal escaped: \(result.stdout)")
        let messages = try pageMessages(workspace, url: url)
        #expect(messages.count == 1)
        let photos = try #require(messages.first?["photos"] as? [[String: Any]])
        #expect(photos.count == 1 && photos[0]["kind"] as? String == "png" && photos[0]["width"] as? Int == 640
                && photos[0]["height"] as? Int == 400 && photos[0]["bytes"] as? Int == 24079, "\(photos)")
        #expect(messages.first?["key"] as? String == "photo")
        // In the real database: the payload holds no bytes, the photo its own row, search its word.
        let store = try MessageStore(dataFolder: workspace.data, user: "me")
        #expect(try store.stored(of: "u42", endingBefore: nil, limit: 5).map(\.envelope.payload.json) == ["{}"])
        #expect(try store.photo(peer: "u42", number: 1, index: 0)?.bytes == (try PhotoFixtures.bytes("flat.png")))
        #expect(try store.search(["Photo"], peer: nil, limit: 5).map(\.text) == ["[Photo]"])
        #expect(try store.search(["iVBOR"], peer: nil, limit: 5).isEmpty)
    }

    @Test("a photo travels with its message through the broker, and what the receiver's host shows it counts against the sender's daily budget")
    func travelling() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"])
        let alice = try broker.workspace(for: "alice")
        // Bob takes 30 KB a day from one peer: a 24 KB photo, then no more.
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "peerBytesPerDay": 30000 }"#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let sent = try transcript(alice, with: "bob", ["/photo \(PhotoFixtures.path("flat.png"))", "/photo \(PhotoFixtures.path("flat.jpg"))"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 1,"), "\(synced.stdout)\(synced.stderr)")
        let shown = try pageMessages(bob, url: houseChat(with: "alice"))
        let photos = try #require(shown.first?["photos"] as? [[String: Any]])
        #expect(photos.first?["kind"] as? String == "png" && photos.first?["bytes"] as? Int == 24079, "\(photos)")
        #expect(try MessageStore(dataFolder: bob.data, user: "bob").photo(peer: "alice", number: 1, index: 0)?.bytes
                == (try PhotoFixtures.bytes("flat.png")))
        // The second photo is past bob's budget for alice: refused, and alice's host says so.
        let refused = try broker.sync(alice, timeout: 3)
        #expect(refused.stderr.contains("bob's host takes no more from you today"), "\(refused.stdout)\(refused.stderr)")
        let mine = try pageMessages(alice, url: houseChat(with: "bob"))
        #expect(mine.map { $0["state"] as? String } == ["delivered", "failed"], "\(mine)")
    }

    @Test("a photo forged by another user with the broker's own clients (a wrong kind, a wrong size, bytes that are no picture, data that is not base64) is stored as a placeholder that says why; the message's text still shows")
    func forged() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let png = try PhotoFixtures.bytes("flat.png").prefix(200)
        let jpeg = try PhotoFixtures.bytes("flat.jpg")
        func forged(_ id: Int, caption: String, _ photo: String) -> String {
            #"{"v":1,"kind":"message","id":"01JCAROL00000000000000000\#(id)","seq":\#(id),"key":"photo","payload":{"caption":"\#(caption)"},"sentAt":1767603600000,"photos":[\#(photo)]}"#
        }
        let wrongKind = #"{"type":"png","width":640,"height":400,"data":"\#(Data(jpeg).base64EncodedString())"}"#
        let wrongSize = #"{"type":"jpeg","width":800,"height":600,"data":"\#(Data(jpeg).base64EncodedString())"}"#
        let noPicture = #"{"type":"png","width":1,"height":1,"data":"\#(Data("<svg onload=alert(1)>".utf8).base64EncodedString())"}"#
        let notBase64 = #"{"type":"png","width":640,"height":400,"data":"!!not base64!!"}"#
        let truncated = #"{"type":"png","width":640,"height":400,"data":"\#(Data(png.prefix(20)).base64EncodedString())"}"#
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [
            forged(1, caption: "kind", wrongKind), forged(2, caption: "size", wrongSize), forged(3, caption: "svg", noPicture),
            forged(4, caption: "base64", notBase64), forged(5, caption: "cut", truncated),
            // A "type" of one letter and 100,000 combining accents: said back as a short word.
            forged(6, caption: "accents", #"{"type":"a\#(String(repeating: "\u{301}", count: 100_000))","width":1,"height":1,"data":""}"#),
        ])
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 6,"), "\(synced.stdout)\(synced.stderr)")
        let shown = try pageMessages(bob, url: houseChat(with: "carol"))
        let refusals = shown.map { (($0["photos"] as? [[String: Any]])?.first?["refused"] as? String) ?? "(shown)" }
        #expect(refusals == [
            "it said it was a png 640×400 picture, but its bytes are a jpeg of 640×400",
            "it said it was a jpeg 800×600 picture, but its bytes are a jpeg of 640×400",
            "it said it was a png 1×1 picture, but it is not a PNG, JPEG or WebP picture (it is XML or SVG)",
            "the photo's data is not base64",
            "it said it was a png 640×400 picture, but it starts as a PNG but has no IHDR header",
            "it said it was a a 1×1 picture, but it is empty",
        ], "\(refusals)")
        let page = try transcript(bob, with: "carol")
        #expect(page.stdout.contains("│ kind "), "\(page.stdout)")
        #expect(page.stdout.contains("│ [Photo not shown: it said it was a png 640×400 │"), "\(page.stdout)")
        #expect(!page.stdout.contains("<svg"))
    }
}
