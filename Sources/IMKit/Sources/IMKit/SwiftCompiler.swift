/// The Swift compiler a module was built with.
///
/// Swift has no stable ABI across compiler versions on Linux, so a plugin must be built by the
/// host's exact compiler. The host compares the `swift_version` a plugin's descriptor carries
/// with its own and refuses a mismatch before it calls into the plugin; `imhost --version`
/// prints the compiler lines must use.
///
/// ``version`` is written at build time from `swiftc --version` (see the package's
/// `CompilerVersion` build plugin), so it names any compiler exactly.
public enum SwiftCompiler {}
