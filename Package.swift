// swift-tools-version: 6.1
import PackageDescription

/// A business line built as a plugin: a dynamic library linking the shared libIMKit.so.
func line(_ name: String, path: String) -> (Product, Target) {
    (.library(name: name, type: .dynamic, targets: [name]),
     .target(name: name, dependencies: [.product(name: "IMKit", package: "IMKit")], path: path))
}

let lines = [
    line("House", path: "Sources/Lines/House"),
    line("Jobs", path: "Sources/Lines/Jobs"),
    line("Cars", path: "Sources/Lines/Cars"),
    line("BenchLine", path: "Benchmarks/BenchLine"),
]

/// Swift plugins that misbehave on purpose, for the loader's tests; two builds (0.2.0 and
/// 0.3.0) of one small line, `rent`, installed over each other under an open chat; and `tasks`,
/// the line guide's smallest cards.
let fixtures = [
    "FixtureMinimal", "FixtureFailing", "FixtureForeignKey", "FixtureOutsideNamespace", "FixtureRouteClash",
    "FixtureServiceCycle", "FixtureCrashy", "FixtureRentOld", "FixtureRentNew", "FixtureCards",
].map {
    line($0, path: "Tests/Fixtures/\($0)")
}

/// The photo decoder: every photo is decoded whole by the platform's libraries (Debian's
/// libpng-dev, libjpeg-dev for libjpeg-turbo, libwebp-dev; `make` installs them where missing),
/// in a child that holds nothing else (`imhost __decode-photo`), through CPhotoDecode's C, which
/// keeps libpng's and libjpeg's longjmps out of Swift frames.
let photoDecoding: [Target] = [
    .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
    .systemLibrary(name: "CJPEG", path: "Sources/CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg-dev"])]),
    .systemLibrary(name: "CWebP", path: "Sources/CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
    .target(name: "CPhotoDecode", dependencies: ["CPNG", "CJPEG", "CWebP"]),
]

/// The voice decoder: every voice message's Opus packets decoded whole by libopus (Debian's
/// libopus-dev), from WebM (CVoiceDecode's small EBML reader) or Ogg (libogg, libogg-dev), in
/// the same child as photos; its length is the sum of the samples decoded.
let voiceDecoding: [Target] = [
    .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
    .systemLibrary(name: "COgg", path: "Sources/COgg", pkgConfig: "ogg", providers: [.apt(["libogg-dev"])]),
    .target(name: "CVoiceDecode", dependencies: ["COpus", "COgg"]),
]

let package = Package(
    name: "imhost",
    products: [
        .executable(name: "imhost", targets: ["imhost"]),
        .executable(name: "imhost-bench", targets: ["imhost-bench"]),
        .library(name: "IMHost", targets: ["IMHost"]),
        .library(name: "IMHostBroker", targets: ["IMHostBroker"]),
        .library(name: "IMHostTerminal", targets: ["IMHostTerminal"]),
    ] + lines.map(\.0) + fixtures.map(\.0),
    dependencies: [
        .package(path: "Sources/IMKit"),
    ],
    targets: [
        // The core: plugins and line states, config, routing, pages, messages, store, services,
        // containment and supervision. No terminal code.
        .target(
            name: "IMHost",
            dependencies: ["CIMHostSupport", "CSQLite", "CMosquitto", "CPhotoDecode", "CVoiceDecode", .product(name: "IMKit", package: "IMKit")]
        ),
        // The brokers imhost provisions and runs: a mosquitto folder (its configuration, the
        // dynamic-security plugin's file and control, the retain rule), its process, a NATS
        // cluster's folder and nodes. The wire and the connection (IMHost) know nothing of it.
        .target(name: "IMHostBroker", dependencies: ["IMHost", "CMosquitto"]),
        // SQLite, the platform's (Debian's libsqlite3-dev): each user's messages.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libmosquitto, Eclipse Mosquitto's MQTT client (Debian's libmosquitto-dev): the
        // connection to the broker. `make` installs it where it is missing.
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto", pkgConfig: "libmosquitto",
                       providers: [.apt(["libmosquitto-dev"])]),
        // GNU libmicrohttpd (Debian's libmicrohttpd-dev): the HTTP server of `imhost web`.
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        // The chat runtime both front ends share: a chat's worker, its supervision, drafts, the
        // actions a person takes and the changes a page goes through. No terminal, no HTML.
        .target(name: "IMHostRuntime", dependencies: ["IMHost", "CIMHostSupport", .product(name: "IMKit", package: "IMKit")]),
        // The browser's front end on the runtime: the HTTP server, imhost web's server and its
        // pages, the page as HTML, the page's own few files. It never calls line code.
        .target(name: "IMHostWeb", dependencies: ["IMHost", "IMHostRuntime", "CMicroHTTPD", "CIMHostSupport", .product(name: "IMKit", package: "IMKit")],
                resources: [.copy("Assets")]),
        // prctl and the crash handler, which Swift cannot call or write safely.
        .target(name: "CIMHostSupport"),
        // The terminal on top of the core: commands, the chat loop, rendering, scenarios.
        .target(
            name: "IMHostTerminal",
            dependencies: ["IMHost", "IMHostBroker", "IMHostRuntime", "IMHostWeb", "CIMHostSupport", .product(name: "IMKit", package: "IMKit")],
            // The files the bundled demos send (a flat's photo).
            resources: [.copy("Demo")]
        ),
        .executableTarget(name: "imhost", dependencies: ["IMHostTerminal"]),
        .executableTarget(
            name: "imhost-bench",
            dependencies: ["IMHost", "IMHostBroker", "IMHostRuntime", "IMHostTerminal", "CHeapStats", "CJPEG", .product(name: "IMKit", package: "IMKit")],
            path: "Benchmarks/IMHostBenchmarks"
        ),
        .target(name: "CHeapStats", path: "Benchmarks/CHeapStats"),
        // IMKit's own tests, kept in its package; run here too, so `swift test` runs them.
        .testTarget(
            name: "IMKitTests",
            dependencies: [.product(name: "IMKit", package: "IMKit")],
            path: "Sources/IMKit/Tests/IMKitTests"
        ),
        .testTarget(
            name: "IMHostTests",
            dependencies: ["IMHost", "IMHostBroker", "IMHostRuntime", "IMHostTerminal", "IMHostWeb", .product(name: "IMKit", package: "IMKit")],
            exclude: ["Golden"]
        ),
    ] + lines.map(\.1) + fixtures.map(\.1) + photoDecoding + voiceDecoding
)

// imhost's retain rule: a mosquitto plugin in C (Sources/CIMHostRetainRule, against Debian's
// mosquitto-dev headers; `make` installs them) that refuses retained messages beyond the ones
// imhost retains by design. `imhost broker init` copies it into the broker folder.
package.products.append(.library(name: "IMHostRetainRule", type: .dynamic, targets: ["CIMHostRetainRule"]))
// It has no headers of its own for other targets: mosquitto finds its functions by name. Linked
// so that the broker loads no Swift runtime: without Swift's startup file (-nostartfiles) nothing
// calls the runtime, and linked statically (-static-stdlib) none of it is taken in (the library
// still names libstdc++ and libm, as Swift's static link does), with no path into the toolchain.
package.targets.append(.target(name: "CIMHostRetainRule", publicHeadersPath: ".",
                               linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib", "-no-toolchain-stdlib-rpath"])]))
