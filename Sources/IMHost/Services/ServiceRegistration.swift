@_spi(Host) import IMKit

/// A service type registered by the host or a line, and how to make one.
struct ServiceRegistration {
    let id: String
    let dependencies: [String]
    /// The line that registered it, or `nil` for the host.
    let line: String?
    let make: () -> any Service

    init(_ type: any Service.Type, line: String?) {
        id = type.id
        dependencies = type.dependencies
        self.line = line
        make = { type.init() }
    }

    init(id: String, dependencies: [String] = [], make: @escaping () -> any Service) {
        self.id = id
        self.dependencies = dependencies
        line = nil
        self.make = make
    }

    /// Who registered it, said the way errors name owners.
    var owner: String { line.map { "line '\($0)'" } ?? "the host" }

    /// Orders services so each comes after its dependencies, keeping registration order among
    /// independent ones; or says which dependency is missing, or which services form a cycle.
    /// Services in `running` count as present and are not ordered again.
    static func buildOrder(_ services: [ServiceRegistration], running: Set<String> = []) -> Result<[ServiceRegistration], ServiceError> {
        let byID = Dictionary(services.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for service in services {
            for dependency in service.dependencies where byID[dependency] == nil && !running.contains(dependency) {
                return .failure(ServiceError(.missingDependency, "service '\(service.id)' depends on '\(dependency)', which is not registered; register it, or remove it from dependencies"))
            }
        }
        var ordered: [ServiceRegistration] = []
        var state: [String: Bool] = [:]  // false: being visited, true: done
        var path: [String] = []
        func visit(_ service: ServiceRegistration) -> ServiceError? {
            if state[service.id] == true { return nil }
            if state[service.id] == false {
                let cycle = path[path.firstIndex(of: service.id)!...] + [service.id]
                return ServiceError(.cycle, "services depend on each other in a cycle: \(cycle.joined(separator: " → ")); break the cycle")
            }
            state[service.id] = false
            path.append(service.id)
            for dependency in service.dependencies {
                guard let next = byID[dependency] else { continue }
                if let error = visit(next) { return error }
            }
            path.removeLast()
            state[service.id] = true
            ordered.append(service)
            return nil
        }
        for service in services {
            if let error = visit(service) { return .failure(error) }
        }
        return .success(ordered)
    }
}
