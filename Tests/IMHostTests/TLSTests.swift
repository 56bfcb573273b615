import Foundation
import Testing
@testable import IMHost
@testable import IMHostBroker

/// Certificates made by `openssl` for a test: a CA, and broker certificates it signs.
struct TestCertificates {
    let folder: String

    init(in folder: String) throws {
        self.folder = folder
        try makeCA("ca")
        try makeCA("other-ca")
    }

    private func openssl(_ arguments: [String]) throws {
        let result = try run("/usr/bin/openssl", arguments, currentDirectory: folder)
        guard result.status == 0 else { throw Workspace.Failure("openssl \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    private func makeCA(_ name: String) throws {
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".pem", "-days", "30",
                     "-subj", "/CN=imhost test \(name)"])
    }

    /// A broker certificate for `names` (DNS names), signed by the test CA, valid for `days`
    /// (negative: already expired). Returns (certificate, key) paths.
    func broker(_ file: String, names: [String], days: Int = 30) throws -> (String, String) {
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", file + ".key", "-out", file + ".csr", "-subj", "/CN=\(names[0])"])
        try ("subjectAltName=" + names.map { "DNS:\($0)" }.joined(separator: ",") + "\n").write(toFile: folder + "/\(file).ext", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", file + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", file + ".pem",
                     "-days", "\(days)", "-extfile", file + ".ext"])
        return (folder + "/\(file).pem", folder + "/\(file).key")
    }
}

@Suite("TLS: mqtts:// to a broker's TLS listener", .heavy(.broker))
struct TLSTests {
    /// A broker with a TLS listener on loopback serving `certificate`.
    static func broker(in root: String, certificate: (String, String), users: [String] = ["alice", "bob"]) throws -> (TestBroker, Int) {
        let port = BrokerFolder.freeLoopbackPort()
        let broker = try TestBroker(in: root, users: users, options: ["--listen", "127.0.0.1:\(port)", "--tls-cert", certificate.0, "--tls-key", certificate.1])
        return (broker, port)
    }

    /// A workspace for `user` reaching `broker` over mqtts://localhost:port with `caFile`.
    static func workspace(_ user: String, _ broker: TestBroker, port: Int, caFile: String) throws -> Workspace {
        let workspace = try broker.workspace(for: user)
        let config = try String(contentsOfFile: workspace.configPath, encoding: .utf8)
        try workspace.writeConfig(config.replacingOccurrences(of: #""url": "\#(broker.url)""#,
                                                              with: #""url": "mqtts://localhost:\#(port)", "caFile": "\#(caFile)""#))
        return workspace
    }

    @Test("two people chat over TLS: the broker's certificate checked against caFile and the name")
    func chat() throws {
        let root = try Workspace()
        let certificates = try TestCertificates(in: root.root)
        let (broker, port) = try Self.broker(in: root.root, certificate: try certificates.broker("broker", names: ["localhost"]))
        let config = try String(contentsOfFile: broker.folder + "/mosquitto.conf", encoding: .utf8)
        #expect(config.contains("\nlistener \(port) 127.0.0.1\ncertfile \(broker.folder)/tls/broker.crt\nkeyfile \(broker.folder)/tls/broker.key\n"))
        let alice = try Self.workspace("alice", broker, port: port, caFile: root.root + "/ca.pem")
        let bob = try Self.workspace("bob", broker, port: port, caFile: root.root + "/ca.pem")
        let first = try broker.sync(bob, timeout: 3)
        #expect(first.status == 0 && first.stderr.contains("connected to mqtts://localhost:\(port) as bob"), "\(first.stderr)")
        _ = try transcript(alice, with: "bob", ["over TLS"])
        #expect(try broker.sync(alice, timeout: 3).status == 0)
        #expect(try broker.sync(bob).stdout.hasPrefix("received 1,"))
        #expect(try transcript(bob, with: "alice").stdout.contains("│ over TLS │"))
    }

    @Test("a wrong CA, an expired certificate and a certificate for another name are refused in one line with where to look", arguments: ["wrong CA", "expired", "wrong name"])
    func refused(_ problem: String) throws {
        let root = try Workspace()
        let certificates = try TestCertificates(in: root.root)
        let certificate = try certificates.broker("broker", names: [problem == "wrong name" ? "other.example" : "localhost"], days: problem == "expired" ? -1 : 30)
        let (broker, port) = try Self.broker(in: root.root, certificate: certificate, users: ["alice"])
        let alice = try Self.workspace("alice", broker, port: port, caFile: root.root + (problem == "wrong CA" ? "/other-ca.pem" : "/ca.pem"))
        let result = try broker.sync(alice, timeout: 3)
        #expect(result.status == 1)
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("imhost sync: could not connect: cannot connect to the broker at mqtts://localhost:\(port): "), "\(result.stderr)")
        // OpenSSL's own reason (libmosquitto's for the name).
        let exact = ["wrong CA": "the broker's certificate is not signed by the CA in transport.caFile (OpenSSL: unable to get local issuer certificate): set caFile to the CA that signed it",
                     "expired": "the broker's certificate has expired (OpenSSL: certificate has expired): renew it on the broker",
                     "wrong name": "the broker's certificate does not name localhost (OpenSSL: hostname mismatch): connect by a name the certificate holds, or issue it for localhost"][problem]!
        #expect(last.contains(exact), "\(result.stderr)")
    }

    @Test("TLS settings that cannot work are refused where they are written")
    func configuration() throws {
        let workspace = try Workspace.standard()
        try "pw\n".write(toFile: workspace.root + "/pw", atomically: true, encoding: .utf8)
        chmod(workspace.root + "/pw", 0o600)
        try "not a CA".write(toFile: workspace.root + "/ca.pem", atomically: true, encoding: .utf8)
        try "key".write(toFile: workspace.root + "/client.key", atomically: true, encoding: .utf8)
        chmod(workspace.root + "/client.key", 0o644)
        let cases: [(String, String)] = [
            (#"{ "url": "mqtts://localhost", "passwordFile": "pw" }"#, "mqtts:// needs \"caFile\""),
            (#"{ "url": "mqtt://localhost", "passwordFile": "pw", "caFile": "ca.pem" }"#, "caFile, certFile and keyFile go with an mqtts:// url"),
            (#"{ "url": "mqtts://localhost", "passwordFile": "pw", "caFile": "ca.pem", "certFile": "ca.pem" }"#, "certFile needs keyFile"),
            (#"{ "url": "mqtts://localhost", "passwordFile": "pw", "caFile": "missing.pem" }"#, "transport.caFile: cannot read"),
            (#"{ "url": "mqtts://localhost", "passwordFile": "pw", "caFile": "ca.pem", "certFile": "ca.pem", "keyFile": "client.key" }"#, "may be read by others"),
        ]
        try expectTransportRefused(cases, in: workspace)
        let noTLS = try imhost(["broker", "init", workspace.root + "/b", "--users", "alice", "--listen", "0.0.0.0:8883"])
        #expect(noTLS.status == 2 && noTLS.stderr.contains("--listen needs --tls-cert and --tls-key"), "\(noTLS.stderr)")
    }
}
