import Foundation
import Testing
@testable import IMHost

/// Files that start as a picture and are not one, made from the real fixtures.
enum BrokenPhotos {
    static let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.cookie)"><script>alert(1)</script></svg>"#.utf8)
    static let html = Array("<!doctype html><html><body><script>alert(document.cookie)</script></body></html>\n".utf8)

    /// A PNG's signature and its IHDR chunk (33 bytes: what the header reader looks at), then `tail`.
    static func pngHeader(then tail: [UInt8]) throws -> [UInt8] { Array(try PhotoFixtures.bytes("flat.png").prefix(33)) + tail }

    /// `name` with a few bytes flipped halfway through.
    static func damagedMiddle(_ name: String) throws -> [UInt8] {
        var bytes = try PhotoFixtures.bytes(name)
        for at in bytes.count / 2..<bytes.count / 2 + 16 { bytes[at] ^= 0x5A }
        return bytes
    }
}

@Suite("Photos decoded whole", .heavy(.broker))
struct PhotoDecodingTests {
    /// A decoder of the test's own, running the built `imhost` as hosts run themselves.
    static func decoder(environment: [String: String] = [:], timeLimit: Double = PhotoDecoder.timeLimit) -> PhotoDecoder {
        PhotoDecoder(executable: BuildProducts.imhost, environment: environment, timeLimit: timeLimit)
    }

    static func refusal(_ bytes: [UInt8], by decoder: PhotoDecoder) -> Photo.Refusal? {
        do throws(Photo.Refusal) { _ = try decoder.check(bytes, limit: 1 << 20); return nil } catch { return error }
    }

    @Test("every fixture, PNG, JPEG and WebP (lossy, lossless, with alpha), decodes whole to the size its header says, in one decoder child reused for all")
    func fixturesDecode() throws {
        let decoder = Self.decoder()
        for fixture in PhotoFixtures.all {
            let bytes = try PhotoFixtures.bytes(fixture.name)
            #expect(try decoder.check(bytes, limit: 1 << 20) == Photo(kind: fixture.kind, width: fixture.width, height: fixture.height, size: bytes.count),
                    "\(fixture.name)")
        }
        #expect(decoder.started == 1)
    }

    @Test("a header followed by something else is refused: a PNG header then SVG or HTML, a picture with HTML or SVG after its end, a JPEG cut short, a damaged middle")
    func refused() throws {
        let decoder = Self.decoder()
        let png = try PhotoFixtures.bytes("flat.png"), jpeg = try PhotoFixtures.bytes("flat.jpg"), webp = try PhotoFixtures.bytes("flat.webp")
        // What the header reader alone took as a 640×400 PNG.
        let svgBehindHeader = try BrokenPhotos.pngHeader(then: BrokenPhotos.svg)
        #expect(try Photo.read(svgBehindHeader, limit: 1 << 20) == Photo(kind: .png, width: 640, height: 400, size: svgBehindHeader.count))
        let cases: [(String, [UInt8], Photo.Refusal.Code)] = [
            ("a PNG header, then SVG", svgBehindHeader, .corrupt),
            // "<!do" read as a chunk's length is a gigabyte: the data ends long before.
            ("a PNG header, then HTML", try BrokenPhotos.pngHeader(then: BrokenPhotos.html), .truncated),
            ("a PNG, then HTML", png + BrokenPhotos.html, .trailingBytes),
            ("a JPEG, then SVG", jpeg + BrokenPhotos.svg, .trailingBytes),
            ("a WebP, then HTML", webp + BrokenPhotos.html, .trailingBytes),
            ("a JPEG cut in half", Array(jpeg.prefix(jpeg.count / 2)), .truncated),
            ("a PNG cut in half", Array(png.prefix(png.count / 2)), .truncated),
            ("a WebP cut in half", Array(webp.prefix(webp.count / 2)), .truncated),
            ("a JPEG with SVG before its end marker", Array(jpeg.dropLast(2)) + BrokenPhotos.svg + Array(jpeg.suffix(2)), .corrupt),
            ("a PNG damaged in the middle", try BrokenPhotos.damagedMiddle("flat.png"), .corrupt),
            ("a lossless WebP damaged in the middle", try BrokenPhotos.damagedMiddle("lossless.webp"), .corrupt),
        ]
        for (what, bytes, code) in cases {
            let refusal = Self.refusal(bytes, by: decoder)
            #expect(refusal?.code == code, "\(what): \(refusal?.description ?? "taken")")
        }
        // One line for a person, naming what was found.
        #expect(Self.refusal(png + BrokenPhotos.html, by: decoder)?.description
                == "it has \(BrokenPhotos.html.count) bytes after the end of its PNG picture (a picture with something else after it)")
        #expect(Self.refusal(Array(jpeg.prefix(4000)), by: decoder)?.description == "its JPEG data ends before the picture does (Premature end of JPEG file)")
        // A refusal costs nothing but that photo: the same child decodes the next.
        #expect(try decoder.check(png, limit: 1 << 20).kind == .png)
        #expect(decoder.started == 1)
    }

    @Test("a decoder child that crashes on a photo costs that photo only: it is refused as such, and the next photo gets a new decoder")
    func crashCostsOnePhoto() throws {
        let tiny = try PhotoFixtures.bytes("tiny.png")
        let decoder = Self.decoder(environment: [PhotoDecoderChild.crashHook: "\(tiny.count)"])
        #expect(try decoder.check(try PhotoFixtures.bytes("flat.jpg"), limit: 1 << 20).kind == .jpeg)
        let first = try #require(decoder.childID)
        let refusal = Self.refusal(tiny, by: decoder)
        #expect(refusal == Photo.Refusal("the photo decoder crashed on it (SIGSEGV)", code: .decoderCrashed), "\(String(describing: refusal))")
        #expect(try decoder.check(try PhotoFixtures.bytes("flat.png"), limit: 1 << 20).kind == .png)
        #expect(decoder.started == 2 && decoder.childID != first)
    }

    @Test("a decoder child that stops answering is killed at the time limit and the photo refused; one killed between photos is replaced")
    func hungAndKilled() throws {
        let decoder = Self.decoder(timeLimit: 1)
        let png = try PhotoFixtures.bytes("flat.png")
        #expect(try decoder.check(png, limit: 1 << 20).kind == .png)
        let stopped = try #require(decoder.childID)
        kill(stopped, SIGSTOP)
        #expect(Self.refusal(png, by: decoder)?.code == .decoderTimedOut)
        // Killed and waited for: no such process any more.
        #expect(kill(stopped, 0) == -1 && errno == ESRCH)
        #expect(try decoder.check(png, limit: 1 << 20).kind == .png)
        let killed = try #require(decoder.childID)
        kill(killed, SIGKILL)
        #expect(Self.waitUntilEnded(killed))
        #expect(try decoder.check(png, limit: 1 << 20).kind == .png)
        #expect(decoder.started == 3)
    }

    /// Waits until process `pid`, a child of this one, has ended (a zombie until its parent
    /// waits for it); false if it is no child of this one.
    static func waitUntilEnded(_ pid: pid_t) -> Bool {
        // Waits for its end without reaping it (WNOWAIT): its parent, the decoder, still does.
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0
    }

    @Test("without a decoder to run, every photo is refused, never taken unchecked")
    func noDecoder() throws {
        let png = try PhotoFixtures.bytes("flat.png")
        #expect(Self.refusal(png, by: PhotoDecoder())?.code == .decoderUnavailable)
        let missing = PhotoDecoder(executable: BuildProducts.folder + "/no-such-imhost")
        #expect(Self.refusal(png, by: missing)?.code == .decoderUnavailable)
        // A program that is not imhost says no hello: it is not taken for a decoder.
        let other = PhotoDecoder(executable: "/bin/true")
        #expect(Self.refusal(png, by: other)?.code == .decoderUnavailable)
    }
}

@Suite("Photos decoded whole, end to end", .heavy(.broker))
struct PhotoDecodingEndToEndTests {
    /// A photo as a peer's envelope carries it.
    static func photo(_ type: String, _ width: Int, _ height: Int, _ bytes: [UInt8]) -> String {
        #"{"type":"\#(type)","width":\#(width),"height":\#(height),"data":"\#(Data(bytes).base64EncodedString())"}"#
    }

    static func message(_ number: Int, caption: String, _ photos: [String]) -> String {
        #"{"v":1,"kind":"message","id":"01JCAROL00000000000000000\#(number)","seq":\#(number),"key":"photo","payload":{"caption":"\#(caption)"},"sentAt":1767603600000,"photos":[\#(photos.joined(separator: ","))]}"#
    }

    @Test("a peer's photo that is a PNG header then SVG, or a picture with HTML after it, is kept as not shown and why, beside the photo that decodes; imhost web does not serve it")
    func peerSendsPolyglot() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let jpeg = try PhotoFixtures.bytes("flat.jpg")
        // Carol publishes with the broker's own client, not through a host: nothing checked her photos.
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [Self.message(1, caption: "three", [
            Self.photo("png", 640, 400, try BrokenPhotos.pngHeader(then: BrokenPhotos.svg)),
            Self.photo("png", 640, 400, try PhotoFixtures.bytes("flat.png") + BrokenPhotos.html),
            Self.photo("jpeg", 640, 400, jpeg),
        ])])
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 1,"), "\(synced.stdout)\(synced.stderr)")
        let shown = try pageMessages(bob, url: houseChat(with: "carol"))
        let photos = try #require(shown.first?["photos"] as? [[String: Any]], "\(shown)")
        #expect(photos.map { $0["refused"] as? String ?? "(shown)" } == [
            "it said it was a png 640×400 picture, but its PNG data is damaged ([20]xml: invalid chunk type)",
            "it said it was a png 640×400 picture, but it has \(BrokenPhotos.html.count) bytes after the end of its PNG picture (a picture with something else after it)",
            "(shown)",
        ], "\(photos)")
        // The message itself is kept and shown, its caption too.
        let page = try transcript(bob, with: "carol")
        #expect(page.stdout.contains("│ three "), "\(page.stdout)")
        #expect(page.stdout.contains("[Photo not shown: it said it was a png 640×400"), "\(page.stdout)")
        #expect(!page.stdout.contains("<svg") && !page.stdout.contains("<html"))

        let web = try WebServing(bob)
        let signIn = try web.request("GET", "/?token=" + String(web.url.split(separator: "=").last!))
        let cookie = try #require(signIn.header("Set-Cookie")?.split(separator: ";").first.map(String.init), "\(signIn.status)")
        for index in 0..<2 {
            let refused = try web.request("GET", "/photo?peer=carol&n=1&i=\(index)", headers: [("Cookie", cookie)])
            #expect(refused.status == 404, "photo \(index): \(refused.status)")
        }
        let served = try web.request("GET", "/photo?peer=carol&n=1&i=2", headers: [("Cookie", cookie)])
        #expect(served.status == 200 && served.header("Content-Type") == "image/jpeg" && [UInt8](served.body) == jpeg, "\(served.status)")
    }

    @Test("a decoder that crashes on a peer's photo costs that photo only: the message is kept, the photo not shown because the decoder crashed, the next photo shown")
    func decoderCrashOnPeerPhoto() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let tiny = try PhotoFixtures.bytes("tiny.png")
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [Self.message(1, caption: "two", [
            Self.photo("png", 1, 1, tiny), Self.photo("png", 640, 400, try PhotoFixtures.bytes("flat.png")),
        ])])
        // The test-only hook: bob's decoder child raises SIGSEGV on a photo of tiny.png's size.
        let synced = try imhost(["sync", "--timeout", "3"], in: bob, environment: [PhotoDecoderChild.crashHook: "\(tiny.count)"])
        #expect(synced.stdout.hasPrefix("received 1,"), "\(synced.stdout)\(synced.stderr)")
        let photos = try #require(try pageMessages(bob, url: houseChat(with: "carol")).first?["photos"] as? [[String: Any]])
        #expect(photos.first?["refused"] as? String == "it said it was a png 1×1 picture, but the photo decoder crashed on it (SIGSEGV)", "\(photos)")
        #expect(photos.last?["kind"] as? String == "png" && photos.last?["bytes"] as? Int == 24079, "\(photos)")
    }

    @Test("/photo of a file that is a PNG header then SVG is refused in one line, and nothing is sent")
    func sendingPolyglot() throws {
        let workspace = try Workspace.standard()
        let file = workspace.root + "/flat.png"
        try Data(try BrokenPhotos.pngHeader(then: BrokenPhotos.svg)).write(to: URL(fileURLWithPath: file))
        let url = "im://chat?rootCateID=1&cateID=12&peer=u42"
        let result = try imhost(["chat", url], input: "/photo \(file)\n/quit\n", in: workspace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\n/photo: not sent: \(file) is not a photo this host sends: its PNG data is damaged ([20]xml: invalid chunk type)\n"),
                "\(result.stdout)")
        #expect(try pageMessages(workspace, url: url).isEmpty)
    }
}
