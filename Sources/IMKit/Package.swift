// swift-tools-version: 6.1
// IMKit is its own package so that the host and every plugin link one shared libIMKit.so:
// a same-package dynamic product is linked statically into each client on Linux, which gives
// every plugin its own copy of CarrierPage and breaks casts across dlopen (see
// docs/ARCHITECTURE.md, "Why IMKit is a package of its own").
import PackageDescription

let package = Package(
    name: "IMKit",
    products: [
        .library(name: "IMKit", type: .dynamic, targets: ["IMKit"]),
    ],
    targets: [
        .target(name: "CIMKitABI"),
        .target(
            name: "IMKit",
            dependencies: ["CIMKitABI"],
            swiftSettings: [
                // A resilient ABI: a plugin built against IMKit 1.0 keeps working with an
                // IMKit 1.x that adds API, built by the same compiler.
                .unsafeFlags(["-enable-library-evolution", "-emit-module-interface"]),
                // Nothing IMKit imports becomes part of its public surface by accident.
                .enableUpcomingFeature("InternalImportsByDefault"),
            ],
            plugins: ["CompilerVersion"]
        ),
        // Writes SwiftCompiler.version from `swiftc --version` at build time.
        .plugin(name: "CompilerVersion", capability: .buildTool()),
        // IMKit's own tests: `swift test --package-path Sources/IMKit`. The repository's
        // package runs them too (as IMKitTests), against the libIMKit.so the host uses.
        .testTarget(name: "IMKitTests", dependencies: ["IMKit"]),
    ]
)
