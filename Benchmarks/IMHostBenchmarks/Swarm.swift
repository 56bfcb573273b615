import Foundation
import IMHost

/// `imhost-bench __swarm VERSION PASSWORDS ADDRESSES FROM TO`: a child process holding host
/// sessions `uFROM` … `u(TO-1)` for the growth benchmark, each a persistent session subscribed
/// as a host's connection subscribes (``Topic/subscriptions(user:device:)``), each on the broker
/// address its number picks from ADDRESSES (`HOST:PORT,…`; a cluster's every node in turn).
/// A process of its own because a session costs this side three descriptors (its socket and the
/// wake pipe of its connecting thread): 10,000 in one process would pass the descriptor limit.
///
/// It reads commands from its standard input, one a line, and answers on its standard output:
/// - `connect`: connects and subscribes every session; `ready N` once all N are subscribed;
/// - `storm`: drops every connection at once (no DISCONNECT, as a lost network would), connects
///   them all again, subscribes again as a host does; `back N` once all are;
/// - `count`: `received N`, the messages its sessions received so far;
/// - end of input: ends.
/// `ready` and `back` say how many connections or subscriptions were refused on the way (each
/// tried again a second later, as a host does).
enum Swarm {
    static func main(_ arguments: [String]) -> Never {
        guard arguments.count == 5, let from = Int(arguments[3]), let to = Int(arguments[4]) else {
            FileHandle.standardError.write(Data("usage: imhost-bench __swarm 3.1.1|5 PASSWORDS HOST:PORT,... FROM TO\n".utf8))
            exit(2)
        }
        let version: MQTTVersion = arguments[0] == "3.1.1" ? .v311 : .v5
        let addresses: [HostConfig.Transport.Address] = arguments[2].split(separator: ",").map {
            let parts = $0.split(separator: ":")
            return .tcp(host: String(parts[0]), port: Int(parts[1]) ?? 0)
        }
        let users = (from..<to).map { "u\($0)" }
        var clients: [MQTTClient] = []
        for (index, user) in users.enumerated() {
            let password = ((try? String(contentsOfFile: arguments[1] + "/" + user, encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
            var settings = MQTTClient.Settings(address: addresses[(from + index) % addresses.count], user: user, password: password, maximumPacket: 1 << 20)
            settings.version = version
            guard let client = try? MQTTClient(settings) else { fail("no client for \(user)") }
            clients.append(client)
        }
        let each = Topic.subscriptions(user: "u0", device: nil).count
        // Per session: the subscriptions answered since its last connect.
        var answered = [Int](repeating: 0, count: clients.count)
        // Per session: whether all its subscriptions were answered since the last command.
        var whole = [Bool](repeating: false, count: clients.count)
        var received = 0
        // What the swarm waits for, and the word it answers with when every session is subscribed.
        var awaiting: String?
        var input = ""

        func say(_ line: String) {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
        func fail(_ why: String) -> Never {
            say("failed " + why)
            exit(1)
        }
        // `connect` makes the sessions a few at a time (their cost, not a storm's); `storm`
        // all at once. Those waiting their turn, and how many may be on their way at once.
        var queue: [Int] = []
        var window = 0, onTheirWay = 0
        var refusals = 0
        // Sessions to connect again, and when: as a host on a cluster does, 1 s after a refusal,
        // then 2 and 4 s (``Failover``'s rounds).
        var again: [(index: Int, at: UInt64)] = []
        var delay = [UInt64](repeating: 1_000_000_000, count: clients.count)
        // Per session: whether a connect is waiting in `again` (two refusals of one connection
        // make one retry).
        var pending = [Bool](repeating: false, count: clients.count)
        func retry(_ index: Int) {
            refusals += 1
            guard !pending[index] else { return }
            pending[index] = true
            clients[index].disconnect()
            // A session lost after it was whole is on its way again.
            if whole[index], awaiting != nil {
                whole[index] = false
                onTheirWay += 1
            }
            again.append((index, now() + delay[index]))
            delay[index] = min(delay[index] * 2, 4_000_000_000)
        }
        func handle(_ index: Int, _ event: MQTTClient.Event) {
            switch event {
            case .connected:
                answered[index] = 0
                for subscription in Topic.subscriptions(user: users[index], device: nil) {
                    _ = clients[index].subscribe(subscription.filter, qos: subscription.qos, retained: subscription.retained)
                }
            case .subscribed(_, let answer):
                guard answer == .taken else {
                    // A cluster's node refuses a subscription whose consumer it could not make
                    // in time: a host drops the connection and tries again.
                    retry(index)
                    return
                }
                answered[index] += 1
                if answered[index] == each, !whole[index] {
                    whole[index] = true
                    onTheirWay -= 1
                    delay[index] = 1_000_000_000
                }
            case .message: received += 1
            case .refused(let refusal) where refusal.credentials: fail("\(users[index])'s login was refused")
            // A broker busy with thousands of others may not take a connection at once: again.
            case .refused, .unreachable: retry(index)
            // A connection lost on its way (the storm's shut sockets) connects again at once; one
            // lost after its session was whole is on its way again, after a pause.
            case .disconnected:
                if whole[index] {
                    retry(index)
                } else if !pending[index] {
                    clients[index].connect()
                }
            default: break
            }
        }
        var lastSweep: UInt64 = 0
        while true {
            // Every second every session is serviced (its keep-alive); between, those whose socket is ready.
            var polls = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            var owners: [Int] = [-1]
            polls.reserveCapacity(clients.count + 1)
            owners.reserveCapacity(clients.count + 1)
            for (index, client) in clients.enumerated() {
                // One descriptor a session: its socket once connecting is done, its wake pipe before.
                guard let descriptor = client.readable.first else { continue }
                let events = Int16(POLLIN) | (client.writable.isEmpty ? 0 : Int16(POLLOUT))
                polls.append(pollfd(fd: descriptor, events: events, revents: 0))
                owners.append(index)
            }
            _ = poll(&polls, nfds_t(polls.count), 50)
            let sweep = now() - lastSweep > 1_000_000_000
            if sweep { lastSweep = now() }
            var serviced = Set<Int>()
            for (slot, polled) in polls.enumerated().dropFirst() where sweep || polled.revents != 0 {
                guard serviced.insert(owners[slot]).inserted else { continue }
                for event in clients[owners[slot]].service() { handle(owners[slot], event) }
            }
            if sweep {
                for index in clients.indices where !serviced.contains(index) {
                    for event in clients[index].service() { handle(index, event) }
                }
            }
            if polls[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 256)
                let count = read(0, &buffer, buffer.count)
                guard count > 0 else { exit(0) }
                input += String(decoding: buffer[0..<count], as: UTF8.self)
                while let end = input.firstIndex(of: "\n") {
                    let command = String(input[..<end])
                    input = String(input[input.index(after: end)...])
                    switch command {
                    case "connect":
                        queue = Array(clients.indices)
                        window = 16
                        awaiting = "ready"
                    case "storm":
                        // Every socket shut at once: the broker sees each connection lost.
                        for client in clients {
                            for descriptor in client.readable { shutdown(descriptor, Int32(SHUT_RDWR)) }
                        }
                        answered = answered.map { _ in 0 }
                        whole = whole.map { _ in false }
                        onTheirWay = clients.count
                        awaiting = "back"
                    case "count": say("received \(received)")
                    default: fail("unknown command \(command)")
                    }
                }
            }
            let moment = now()
            let due = again.filter { $0.at <= moment }
            again.removeAll { $0.at <= moment }
            for retry in due {
                pending[retry.index] = false
                clients[retry.index].connect()
            }
            while onTheirWay < window, let next = queue.first {
                queue.removeFirst()
                onTheirWay += 1
                clients[next].connect()
            }
            if let word = awaiting, !whole.contains(false) {
                say("\(word) \(clients.count) refused \(refusals)")
                refusals = 0
                awaiting = nil
            }
        }
    }
}
