import Foundation
import Testing
@testable import IMHost

/// Issue 41, point 7: files (a résumé, a contract), sent with their name and size, their type
/// read from their bytes, downloaded from the page and never opened.
@Suite("Files", .heavy(.broker))
struct FileTests {
    /// A small PDF's first bytes and some more, as a file of `size` bytes.
    static func pdf(_ size: Int = 3000) -> Data {
        var bytes = Array("%PDF-1.4\n%âãÏÓ\n1 0 obj << /Type /Catalog >> endobj\n".utf8)
        bytes += [UInt8](repeating: 0x20, count: max(0, size - bytes.count))
        return Data(bytes)
    }

    @Test("a file's name is made safe (one path part, no control or bidirectional characters) and its type is what its bytes say, whatever it is called")
    func namesAndTypes() throws {
        #expect(SharedFile.safeName("../../etc/passwd") == "passwd")
        #expect(SharedFile.safeName("C:\\Users\\bob\\cv.pdf") == "cv.pdf")
        #expect(SharedFile.safeName("invoice\u{202E}fdp.exe") == "invoicefdp.exe")
        #expect(SharedFile.safeName("line\none.txt") == "lineone.txt")
        #expect(SharedFile.safeName("..") == nil && SharedFile.safeName(" / ") == nil && SharedFile.safeName("") == nil)
        #expect(SharedFile.safeName(String(repeating: "简", count: 100))?.utf8.count == 198)
        let html = Array("<html><script>alert(1)</script></html>\n".utf8)
        let cases: [(String, [UInt8], String)] = [
            ("cv.pdf", [UInt8](Self.pdf()), "application/pdf"),
            ("contract.docx", [0x50, 0x4B, 0x03, 0x04, 0, 0], "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            ("photos.zip", [0x50, 0x4B, 0x03, 0x04, 0, 0], "application/zip"),
            ("old.doc", [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0], "application/msword"),
            // Named as a PDF, HTML by its bytes: text, downloaded as text, never a page.
            ("invoice.pdf", html, "text/plain; charset=utf-8"),
            ("blob.pdf", [0x00, 0x01, 0xFF, 0xFE], "application/octet-stream"),
            ("flat.jpg", try PhotoFixtures.bytes("flat.png"), "image/png"),
        ]
        for (name, bytes, type) in cases {
            #expect(try SharedFile.read(name: name, bytes: bytes, limit: 1 << 20).type == type, "\(name)")
        }
        #expect(throws: SharedFile.Refusal.self) { try SharedFile.read(name: "a.txt", bytes: [], limit: 10) }
        #expect(throws: SharedFile.Refusal.self) { try SharedFile.read(name: "a.txt", bytes: [0x41, 0x42], limit: 1) }
    }

    @Test("/file sends a file through the broker: bob's host keeps it apart from the payload, shows [File cv.pdf · 3 KB], search finds its name; an empty file, one past limits.fileBytes and one that is not there are refused in one line each", arguments: BrokerKind.allCases)
    func sending(_ kind: BrokerKind) throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["alice", "bob"], kind: kind)
        let alice = try broker.workspace(for: "alice", config: #", "limits": { "fileBytes": 100000 }"#)
        let bob = try broker.workspace(for: "bob")
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        let cv = root.root + "/cv.pdf", empty = root.root + "/empty.txt", big = root.root + "/big.pdf"
        try Self.pdf().write(to: URL(fileURLWithPath: cv))
        try Data().write(to: URL(fileURLWithPath: empty))
        try Self.pdf(100_001).write(to: URL(fileURLWithPath: big))
        let sent = try transcript(alice, with: "bob", ["/file \(cv)", "/file \(empty)", "/file \(big)", "/file \(root.root)/none.pdf"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("│ [File cv.pdf · 3 KB] │"), "\(sent.stdout)")
        #expect(sent.stdout.contains("\n/file: not sent: \(empty): it is empty\n"), "\(sent.stdout)")
        #expect(sent.stdout.contains("\n/file: not sent: \(big): it is 100001 bytes; the limit is 100000 (limits.fileBytes in host.json)\n"), "\(sent.stdout)")
        #expect(sent.stdout.contains("\n/file: not sent: cannot read \(root.root)/none.pdf: "), "\(sent.stdout)")

        let shown = syncUntilShown(bob, through: broker, url: houseChat(with: "alice"))
        #expect(!shown.isEmpty, "bob's page shows nothing from alice")
        let file = try #require(shown.first?["file"] as? [String: Any], "\(shown)")
        #expect(file["name"] as? String == "cv.pdf" && file["type"] as? String == "application/pdf" && file["bytes"] as? Int == 3000, "\(file)")
        #expect(try transcript(bob, with: "alice").stdout.contains("│ [File cv.pdf · 3 KB] │"))
        let store = try MessageStore(dataFolder: bob.data, user: "bob")
        #expect(try store.file(peer: "alice", number: 1)?.bytes == [UInt8](Self.pdf()))
        #expect(try store.stored(of: "alice", endingBefore: nil, limit: 5).map(\.envelope.payload.json) == [#"{"name":"cv.pdf","size":3000}"#])
        #expect(try store.search(["cv.pdf"], peer: nil, limit: 5).map(\.text) == ["[File] cv.pdf"])
    }

    @Test("a file forged with the broker's own clients: its name is made safe, its type is read from its bytes (HTML called .pdf is text), and one that is not base64, too large for bob, or nameless is shown as why")
    func forged() throws {
        let root = try Workspace()
        let broker = try TestBroker(in: root.root, users: ["bob", "carol"])
        let bob = try broker.workspace(for: "bob", config: #", "limits": { "fileBytes": 4096 }"#)
        #expect(try broker.sync(bob, timeout: 2).status == 0)
        func forged(_ id: Int, key: String = "file", _ file: String) -> String {
            #"{"v":1,"kind":"message","id":"01JCAROL00000000000000000\#(id)","seq":\#(id),"key":"\#(key)","payload":{"name":"x","size":1},"sentAt":1767603600000,"file":\#(file)}"#
        }
        let html = Data("<html><script>alert(document.cookie)</script></html>".utf8).base64EncodedString()
        try broker.publish(as: "carol", topic: "imhost/u/bob/from/carol", [
            forged(1, #"{"name":"../../home/bob/.bashrc\u202Efdp.pdf","data":"\#(html)"}"#),
            forged(2, #"{"name":"a.pdf","data":"!!not base64!!"}"#),
            forged(3, #"{"name":"big.pdf","data":"\#(Self.pdf(5000).base64EncodedString())"}"#),
            forged(4, #"{"name":"..","data":"\#(html)"}"#),
            forged(5, key: "text", #"{"name":"t.pdf","data":"\#(html)"}"#),
        ])
        let synced = try broker.sync(bob, timeout: 3)
        #expect(synced.stdout.hasPrefix("received 5,"), "\(synced.stdout)\(synced.stderr)")
        let files = try pageMessages(bob, url: houseChat(with: "carol")).map { $0["file"] as? [String: Any] }
        #expect(files[0]?["name"] as? String == ".bashrcfdp.pdf" && files[0]?["type"] as? String == "text/plain; charset=utf-8", "\(files)")
        #expect(files[1]?["refused"] as? String == "the file's data is not base64", "\(files)")
        #expect(files[2]?["refused"] as? String == "the file is larger than the 4096 bytes this host takes (limits.fileBytes)", "\(files)")
        #expect(files[3]?["refused"] as? String == "its name is no file name once made safe to show", "\(files)")
        #expect(files[4] == nil, "a text's file is not read")
    }

    @Test("a 9 MiB file, more than one catch-up answer's 8 MiB, reaches alice's phone, away when her laptop sent it: it goes in an answer of its own")
    func largeFileCatchUp() throws {
        let people = try DeviceSyncTests.People()
        let (laptop, phone) = try people.aliceOnBoth()
        phone.send("/quit")
        #expect(phone.finish().status == 0)
        defer { laptop.signal(SIGKILL); _ = laptop.finish() }
        let contract = people.root.root + "/contract.pdf"
        let bytes = Self.pdf(9 << 20)
        try bytes.write(to: URL(fileURLWithPath: contract))
        laptop.send("/file \(contract)")
        #expect(laptop.waitFor("│ [File contract.pdf · 9.4 MB] │", timeout: 60), "\(laptop.stdout)")
        var page: [[String: Any]] = []
        #expect(waitUntil(timeout: 120) {
            _ = try? people.broker.sync(people.phone)
            page = (try? pageMessages(people.phone, url: houseChat(with: "bob"))) ?? []
            return (page.first?["file"] as? [String: Any])?["bytes"] as? Int == 9 << 20
        }, "\(page)")
        #expect(try MessageStore(dataFolder: people.phone.data, user: "alice").file(peer: "bob", number: 1)?.bytes == [UInt8](bytes))
    }
}

extension BrowserSuites {
    /// Issue 41, point 7, in the browser: a file picked with 📎, offered for download at the peer.
    @Suite("Files in the browser")
    struct WebFileTests {
        @Test("alice picks a file with 📎; bob's page offers it for download by its name: served as an attachment of the type its bytes say, nosniff, sandboxed, to bob's session only")
        func pickAndDownload() throws {
            let people = try TwoPeopleInABrowser(dev: false)
            let (alice, bob) = (people.alice, people.bob)
            let cv = people.root.root + "/Lebenslauf Müller.pdf"
            try FileTests.pdf().write(to: URL(fileURLWithPath: cv))
            _ = try #require(try alice.find("form[data-send] button[data-file]"), "the page offers no 📎")
            try #require(try alice.waitFor("input.file-pick")).type(cv)
            #expect(try bob.waitFor(".message.received .bubble.file a.download", containing: "Lebenslauf Müller.pdf"))
            #expect(try bob.textContent(".message.received .bubble.file .file-facts") == "3 KB · PDF")
            let link = try #require(try bob.execute("return document.querySelector('.message.received a.download').getAttribute('href')") as? String)
            #expect(link.hasPrefix("/file?peer=alice&n="), "\(link)")
            let cookie = try #require(try bob.cookies().first { $0.name == "imhost-\(people.bobWeb.port)" })
            let served = try people.bobWeb.request("GET", link, headers: [("Cookie", "\(cookie.name)=\(cookie.value)")])
            #expect(served.status == 200 && served.header("Content-Type") == "application/pdf" && served.header("X-Content-Type-Options") == "nosniff")
            #expect(served.header("Content-Disposition") == #"attachment; filename="Lebenslauf M_ller.pdf"; filename*=UTF-8''Lebenslauf%20M%C3%BCller.pdf"#,
                    "\(served.header("Content-Disposition") ?? "")")
            #expect(served.header("Content-Security-Policy") == "default-src 'none'; sandbox")
            #expect(served.body == FileTests.pdf())
            #expect(try people.bobWeb.request("GET", link).status == 403, "not without bob's session")
            // Empty: refused in the page, nothing sent.
            let empty = people.root.root + "/empty.txt"
            try Data().write(to: URL(fileURLWithPath: empty))
            try #require(try alice.waitFor("input.file-pick")).type(empty)
            #expect(try alice.waitFor("#notice-log", containing: "Not sent: this file cannot be sent (it is empty)"))
            #expect(try bob.findAll(".message.received").count == 1)
        }
    }
}
