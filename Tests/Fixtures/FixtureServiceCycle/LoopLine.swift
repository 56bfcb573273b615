import IMKit

/// Two services that depend on each other: the line fails, naming the cycle.
enum LoopLine: BusinessLine {
    static let id = "loop"
    static let displayName = "Loop"
    static let version = "0.1.0"

    final class First: Service {
        static let id = "loop.first"
        static let dependencies = ["loop.second"]
        required init() {}
    }

    final class Second: Service {
        static let id = "loop.second"
        static let dependencies = ["loop.first"]
        required init() {}
    }

    static func register(with registrar: LineRegistrar) throws {
        try registrar.registerService(First.self)
        try registrar.registerService(Second.self)
    }
}

@c(imkit_plugin_entry)
public func imkitPluginEntry() -> UnsafeRawPointer {
    PluginEntry.descriptor(for: LoopLine.self)
}
