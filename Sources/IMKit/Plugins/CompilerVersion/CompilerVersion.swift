import Foundation
import PackagePlugin

/// Writes `SwiftCompiler.version` for IMKit at build time, from the first line of
/// `swiftc --version` of the toolchain doing the build: the exact compiler, whatever its
/// version, with nothing to keep up to date by hand.
///
/// The compiler is an input of the command, so a new toolchain regenerates the file.
@main
struct CompilerVersion: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let swiftc = try context.tool(named: "swiftc").url
        let output = context.pluginWorkDirectoryURL.appending(path: "SwiftCompilerVersion.swift")
        // `sh` rather than a tool of our own: nothing more to build before IMKit.
        let script = #"""
            version=$("$1" --version 2>/dev/null | head -n 1 | sed -e 's/^.*Swift version //' -e 's/[\\"]/\\&/g')
            [ -n "$version" ] || { echo "error: cannot read the version of $1" >&2; exit 1; }
            cat > "$2" <<SWIFT
            // Generated at build time from \`swiftc --version\`; do not edit.
            extension SwiftCompiler {
                /// The exact compiler that compiled the *calling* module, as the first line of
                /// \`swiftc --version\` gives it after "Swift version", e.g.
                /// \`"6.3.1 (swift-6.3.1-RELEASE)"\`.
                ///
                /// Emitted into the client, so a plugin carries the compiler it was built with.
                @_alwaysEmitIntoClient
                public static var version: String { "$version" }
            }
            SWIFT
            """#
        return [
            .buildCommand(
                displayName: "Recording the Swift compiler's version for IMKit",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", swiftc.path, output.path],
                inputFiles: [swiftc],
                outputFiles: [output])
        ]
    }
}
