@_spi(Host) import IMKit

/// One signed-in user's services, driven through their lifecycle: prepare, initialize, online
/// and offline, finalize. Built in dependency order, finalized in reverse. Every call into a
/// line's service runs inside a breadcrumb frame naming the line and the service.
final class UserSession {
    let context: UserContext
    /// Services that could not be built, each with the reason; the rest run without them.
    private(set) var problems: [String] = []
    private(set) var isOnline = false
    private var built: [(registration: ServiceRegistration, service: any Service)] = []
    private let lineGuard: LineGuard
    private let mark: (String) -> LineMark?

    init(user: String, transport: Transport, guard lineGuard: LineGuard, mark: @escaping (String) -> LineMark?) {
        context = UserContext(userID: user, transport: transport)
        self.lineGuard = lineGuard
        self.mark = mark
    }

    /// Runs one lifecycle call of a service inside its line's breadcrumb frame.
    private func call<T>(_ registration: ServiceRegistration, _ step: String, _ body: () throws -> T) rethrows -> T {
        try lineGuard.run(.service, registration.line.flatMap(mark), key: "\(registration.id) \(step)") { try body() }
    }

    /// Builds services in dependency order (`prepare` all, then `initialize` all) and, when the
    /// user is online, takes them online. Used at sign-in, and when a line loads later: its
    /// services depend only on the host's and its own, which are already running.
    func start(_ registrations: [ServiceRegistration]) {
        let running = Set(built.map(\.registration.id))
        let ordered: [ServiceRegistration]
        switch ServiceRegistration.buildOrder(registrations.filter { !running.contains($0.id) }, running: running) {
        case .success(let order): ordered = order
        case .failure(let error):
            // Registration refuses cycles and missing dependencies; this is a last guard.
            problems.append("\(error)")
            return
        }
        let instances = ordered.map { registration in (registration, call(registration, "init") { registration.make() }) }
        var ready: [(ServiceRegistration, any Service)] = []
        for (registration, service) in instances {
            do {
                try call(registration, "prepare") { try service.prepare(in: context) }
                ready.append((registration, service))
            } catch {
                problems.append("service '\(registration.id)' (\(registration.owner)) failed to prepare: \(error)")
                call(registration, "finalize") { service.finalize() }
            }
        }
        var failed: Set<String> = Set(instances.map(\.0.id)).subtracting(ready.map(\.0.id))
        var started: [(ServiceRegistration, any Service)] = []
        for (registration, service) in ready {
            if let missing = registration.dependencies.first(where: failed.contains) {
                problems.append("service '\(registration.id)' (\(registration.owner)) is not started: it depends on '\(missing)', which failed")
                failed.insert(registration.id)
                call(registration, "finalize") { service.finalize() }
                continue
            }
            // Initialize sees its dependencies in the context, already initialized.
            context.add(service)
            do {
                try call(registration, "initialize") { try service.initialize(in: context) }
                started.append((registration, service))
            } catch {
                problems.append("service '\(registration.id)' (\(registration.owner)) failed to initialize: \(error)")
                failed.insert(registration.id)
                context.remove(service)
                call(registration, "finalize") { service.finalize() }
            }
        }
        built += started
        if isOnline {
            for (registration, service) in started { call(registration, "online") { service.online() } }
        }
    }

    /// Calls `online()` on every service in dependency order, or `offline()` in reverse, then
    /// tells the transport's observers.
    func setOnline(_ online: Bool) {
        guard online != isOnline else { return }
        isOnline = online
        if online {
            for (registration, service) in built { call(registration, "online") { service.online() } }
        } else {
            for (registration, service) in built.reversed() { call(registration, "offline") { service.offline() } }
        }
        // Observers are lines' handlers, of lines unknown here: a crash in one is blamed by the
        // crash handler on the line whose library is on the stack.
        context.transport.setOnline(online)
    }

    /// Stops one line's services (the line was killed, quarantined or disabled): offline if the
    /// user is online, then finalized, in reverse order.
    func stop(line: String) {
        let stopping = built.filter { $0.registration.line == line }
        for (registration, service) in stopping.reversed() {
            if isOnline { call(registration, "offline") { service.offline() } }
            call(registration, "finalize") { service.finalize() }
            context.remove(service)
        }
        built.removeAll { $0.registration.line == line }
    }

    /// Takes the user offline, then finalizes every service in reverse order and drops them.
    func finalize() {
        setOnline(false)
        for (registration, service) in built.reversed() {
            call(registration, "finalize") { service.finalize() }
            context.remove(service)
        }
        built = []
    }
}
