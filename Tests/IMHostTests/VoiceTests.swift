import Foundation
import Testing
@testable import IMHost

/// The recordings the voice tests decode (Tests/Fixtures/Voice/README.md says how each was made).
enum VoiceFixtures {
    static let folder = BuildProducts.repository + "/Tests/Fixtures/Voice/"
    static func path(_ name: String) -> String { folder + name }
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name)))) }
}

/// Issue 41, point 6: voice messages, decoded whole in the decoder child (libopus; WebM by the
/// host's EBML reader, Ogg by libogg), their length the sum of the samples decoded.
@Suite("Voice messages", .heavy(.broker))
struct VoiceTests {
    static func refusal(_ bytes: [UInt8], by decoder: PhotoDecoder) -> Voice.Refusal.Code? {
        do throws(Voice.Refusal) { _ = try decoder.checkVoice(bytes); return nil } catch { return error.code }
    }

    @Test("WebM as Chromium records it and Ogg as opusenc writes it decode whole, their length counted from the samples; in the same decoder child as photos")
    func fixturesDecode() throws {
        let decoder = PhotoDecodingTests.decoder()
        let webm = try decoder.checkVoice(try VoiceFixtures.bytes("hello.webm"))
        #expect(webm.kind == .webm && webm.milliseconds == 3000 && webm.shown == "0:03", "\(webm)")
        let ogg = try decoder.checkVoice(try VoiceFixtures.bytes("three.ogg"))
        #expect(ogg.kind == .ogg && (3000...3030).contains(ogg.milliseconds), "\(ogg)")
        // The longest a recording may be: its last packet ends just past 60 s.
        let sixty = try decoder.checkVoice(try VoiceFixtures.bytes("sixty.ogg"))
        #expect((60_000...60_100).contains(sixty.milliseconds) && sixty.shown == "1:00", "\(sixty)")
        #expect(try decoder.check(try PhotoFixtures.bytes("flat.png"), limit: 1 << 20).width == 640)
        #expect(decoder.started == 1)
    }

    @Test("what is not a whole Opus recording within 60 s is refused with a code: too long, cut short, damaged, another container, more than the limit, a picture; the child goes on with the next")
    func refused() throws {
        let decoder = PhotoDecodingTests.decoder()
        let webm = try VoiceFixtures.bytes("hello.webm"), ogg = try VoiceFixtures.bytes("three.ogg")
        var badChecksum = ogg
        badChecksum[ogg.count / 2] ^= 0x5A
        var brokenElement = webm
        // The Segment's size, made larger than the file: the data ends inside it.
        brokenElement[0x2F] = 0xFF
        let cases: [(String, [UInt8], Voice.Refusal.Code)] = [
            ("65 s of sound", try VoiceFixtures.bytes("long.ogg"), .tooLong),
            ("a WebM cut in half", Array(webm.prefix(webm.count / 2)), .truncated),
            ("an Ogg cut in half", Array(ogg.prefix(ogg.count / 2)), .truncated),
            ("an Ogg page with a bad checksum", badChecksum, .corrupt),
            ("a WebM whose segment runs past its end", brokenElement, .truncated),
            ("two Ogg streams one after the other", ogg + ogg, .unsupported),
            // After the segment: a Void element wrapping a page of HTML (found by a fuzzing review).
            ("a WebM, then HTML in a Void element", webm + [0xEC, 0x8D] + Array("<html>evil</>".utf8), .trailingBytes),
            ("an Ogg, then 40 bytes of junk", ogg + [UInt8](repeating: 0x41, count: 40), .trailingBytes),
            ("an Ogg cut where a page starts", Array(ogg.prefix(Self.pageStarts(ogg)[3])), .truncated),
            ("a PNG", try PhotoFixtures.bytes("flat.png"), .header),
            ("nothing", [], .header),
            ("more than 1 MiB", [0x1A, 0x45, 0xDF, 0xA3] + [UInt8](repeating: 0, count: Voice.byteLimit), .tooLarge),
            // "<!d" read as an element whose size runs past the end.
            ("an EBML header and HTML", [0x1A, 0x45, 0xDF, 0xA3, 0x80] + BrokenPhotos.html, .truncated),
            ("an EBML header and nothing", [0x1A, 0x45, 0xDF, 0xA3, 0x80], .corrupt),
        ]
        for (what, bytes, code) in cases {
            #expect(Self.refusal(bytes, by: decoder) == code, "\(what)")
        }
        #expect(try decoder.checkVoice(webm).milliseconds == 3000, "the child took the next one")
        #expect(decoder.started == 1, "nothing above cost the child")
    }

    /// Where each Ogg page of `bytes` starts.
    static func pageStarts(_ bytes: [UInt8]) -> [Int] {
        (0..<bytes.count - 4).filter { bytes[$0..<$0 + 4].elementsEqual(Array("OggS".utf8)) }
    }

    @Test("a decoder that dies on a recording costs that recording: refused as a crash, and the next one gets a new child")
    func crashContained() throws {
        let webm = try VoiceFixtures.bytes("hello.webm")
        let decoder = PhotoDecodingTests.decoder(environment: [PhotoDecoderChild.crashHook: "\(webm.count)"])
        #expect(Self.refusal(webm, by: decoder) == .decoderCrashed)
        #expect(try decoder.checkVoice(try VoiceFixtures.bytes("three.ogg")).kind == .ogg)
        #expect(decoder.started == 2)
    }

    @Test("/voice sends a recording through the broker: bob's host decodes it and shows [Voice 0:03], its bytes stored apart from the payload; a file that is not one is refused in one line; the page serves it as audio/webm, never sniffed", arguments: BrokerKind.allCases)
    func sending(_ kind: BrokerKind) throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: kind)
        let alice = try broker.workspace(for: "alice")
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let notes = root.root + "/notes.webm"
        try "shopping: eggs\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let sent = try transcript(alice, with: "bob", ["/voice \(VoiceFixtures.path("hello.webm"))", "/voice \(notes)", "/voice \(root.root)/none.ogg"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("│ [Voice 0:03] │"), "\(sent.stdout)")
        #expect(sent.stdout.contains("\n/voice: not sent: \(notes) is not a voice message this host sends (WebM or Ogg with Opus, at most 60 s and 1 MiB): it is not a WebM or Ogg recording with Opus\n"),
                "\(sent.stdout)")
        #expect(sent.stdout.contains("\n/voice: not sent: cannot read \(root.root)/none.ogg: "), "\(sent.stdout)")

        let shown = syncUntilShown(bob, through: broker, url: houseChat(with: "alice"))
        #expect(!shown.isEmpty, "bob's page shows nothing from alice")
        let voice = try #require(shown.first?["voice"] as? [String: Any], "\(shown)")
        #expect(voice["kind"] as? String == "webm" && voice["milliseconds"] as? Int == 3000 && voice["bytes"] as? Int == 8004, "\(voice)")
        let page = try transcript(bob, with: "alice")
        #expect(page.stdout.contains("│ [Voice 0:03] │"), "\(page.stdout)")
        // In the real database: the recording in its own row, the payload its length only.
        let store = try MessageStore(dataFolder: bob.data, user: "bob")
        #expect(try store.voice(peer: "alice", number: 1)?.bytes == (try VoiceFixtures.bytes("hello.webm")))
        #expect(try store.stored(of: "alice", endingBefore: nil, limit: 5).map(\.envelope.payload.json) == [#"{"url":"","seconds":3,"milliseconds":3000}"#])
    }

    @Test("a recording forged with the broker's own clients is played for what it decodes to: a payload that says 59 s shows 0:03; bytes that are no sound, a wrong type, and a recording on a text message are shown as why, never played")
    func forged() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let webm = Data(try VoiceFixtures.bytes("hello.webm")).base64EncodedString()
        func forged(_ id: Int, key: String = "voice", payload: String = #"{"url":"","seconds":59}"#, _ voice: String) -> String {
            #"{"v":1,"kind":"message","id":"01JCAROL00000000000000000\#(id)","seq":\#(id),"key":"\#(key)","payload":\#(payload),"sentAt":1767603600000,"voice":\#(voice)}"#
        }
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [
            forged(1, #"{"type":"webm","data":"\#(webm)"}"#),
            forged(2, #"{"type":"webm","data":"\#(Data("<script>alert(1)</script>".utf8).base64EncodedString())"}"#),
            forged(3, #"{"type":"ogg","data":"\#(webm)"}"#),
            forged(4, key: "text", payload: #"{"text":"hi"}"#, #"{"type":"webm","data":"\#(webm)"}"#),
        ])
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 4,"), "\(synced.stdout)\(synced.stderr)")
        let shown = try pageMessages(bob, url: houseChat(with: "carol"))
        let voices = shown.map { $0["voice"] as? [String: Any] }
        #expect(voices[0]?["milliseconds"] as? Int == 3000, "the length is the decoded one: \(voices)")
        #expect(voices[1]?["refused"] as? String == "it is not a WebM or Ogg recording with Opus", "\(voices)")
        #expect(voices[2]?["refused"] as? String == "it said it was Ogg, but its bytes are WebM", "\(voices)")
        #expect(voices[3] == nil, "a text's recording is not read")
        let page = try transcript(bob, with: "carol")
        #expect(page.stdout.contains("│ [Voice 0:03] │"), "\(page.stdout)")
        #expect(page.stdout.contains("[Voice not shown: it is not a Web"), "\(page.stdout)")
        #expect(try MessageStore(dataFolder: bob.data, user: "bob").voice(peer: "carol", number: 2) == nil, "nothing of it is served")
    }

    @Test("alice's phone, away while she sent a voice message from her laptop, gets the recording with the catch-up; recalled, it leaves both her stores and bob's")
    func devicesAndRecall() throws {
        let people = try DeviceSyncTests.People()
        let (laptop, phone) = try people.aliceOnBoth()
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        let bob = try people.bobsChat()
        defer { for chat in [laptop, bob] { chat.signal(SIGKILL); _ = chat.finish() } }
        laptop.send("/voice \(VoiceFixtures.path("three.ogg"))")
        #expect(bob.waitFor("│ [Voice 0:03] │"), "\(bob.stdout)")
        var phonePage: [[String: Any]] = []
        #expect(waitUntil(timeout: 60) {
            _ = try? people.broker.sync(people.phone)
            phonePage = (try? pageMessages(people.phone, url: houseChat(with: "bob"))) ?? []
            return (phonePage.first?["voice"] as? [String: Any])?["kind"] as? String == "ogg"
        }, "\(phonePage)")
        #expect(laptop.waitFor("read ✓✓"), "\(laptop.stdout)")
        laptop.send("/recall 1")
        #expect(bob.waitFor("(alice recalled this message)"), "\(bob.stdout)")
        for (workspace, user) in [(people.bob, "bob"), (people.laptop, "alice")] {
            #expect(waitUntil(timeout: 30) {
                let count = try? run("/usr/bin/sqlite3", [workspace.data + "/users/\(user)/messages.sqlite3", "SELECT count(*) FROM voices"])
                return count?.stdout == "0\n"
            }, "\(user)'s store let the recording go")
        }
    }
}

extension BrowserSuites {
    /// Issue 41, point 6, in the browser: recorded with MediaRecorder (Chromium's fake
    /// microphone), played with `<audio>` under the page's CSP (`media-src 'self'`).
    @Suite("Voice messages in the browser")
    struct WebVoiceTests {
        @Test("alice presses Voice, records, presses it again: bob's page plays it (audio/webm from the host's own server, its length as decoded); Escape while recording sends nothing")
        func recordAndPlay() throws {
            let people = try TwoPeopleInABrowser()
            let (alice, bob) = (people.alice, people.bob)
            let voice = try #require(try alice.waitFor("button[data-voice]"))
            try voice.click()
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').getAttribute('aria-pressed') === 'true'"))
            // A little over two seconds of the fake microphone's tone.
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').textContent.endsWith('0:02')", timeout: 20))
            try #require(try alice.find("button[data-voice]")).click()
            #expect(try bob.waitFor(".message.received .bubble.voice audio", timeout: 60) != nil)
            let source = try #require(try bob.execute("return document.querySelector('.message.received .bubble.voice audio').src") as? String)
            #expect(source.contains("/voice?peer=alice&n="), "\(source)")
            let duration = try bob.textContent(".message.received .bubble.voice .duration") ?? ""
            #expect(["0:02", "0:03"].contains(duration), "\(duration)")
            // The player can load it: the browser decodes what the host served (type and CSP allow it).
            #expect(try bob.waitUntil("""
                (() => { const audio = document.querySelector('.message.received .bubble.voice audio');
                         if (!audio.dataset.asked) { audio.dataset.asked = '1'; audio.preload = 'auto'; audio.load(); }
                         return audio.readyState >= 1 || audio.error !== null; })()
                """, timeout: 30))
            let failure = try bob.execute("const e = document.querySelector('.message.received .bubble.voice audio').error; return e ? e.code + ' ' + e.message : ''")
            #expect(failure as? String == "", "the player could not load it: \(String(describing: failure))")
            // Served from bob's host as what its bytes are, never sniffed, never a page.
            let cookie = try #require(try bob.cookies().first { $0.name == "imhost-\(people.bobWeb.port)" })
            let path = String(source[source.range(of: "/voice?")!.lowerBound...])
            let served = try people.bobWeb.request("GET", path, headers: [("Cookie", "\(cookie.name)=\(cookie.value)")])
            #expect(served.status == 200 && served.header("Content-Type") == "audio/webm" && served.header("X-Content-Type-Options") == "nosniff")
            #expect(try people.bobWeb.request("GET", path).status == 403, "not without bob's session")
            // Escape while recording: nothing is sent.
            try #require(try alice.find("button[data-voice]")).click()
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').getAttribute('aria-pressed') === 'true'"))
            try #require(try alice.find("form[data-send] input")).type("\u{E00C}")
            #expect(try alice.waitUntil("document.querySelector('button[data-voice]').getAttribute('aria-pressed') === 'false'"))
            try alice.send("after the voice")
            #expect(try bob.waitFor(".message.received .bubble.text", containing: "after the voice"))
            #expect(try bob.findAll(".message.received .bubble.voice").count == 1)
        }
    }
}
