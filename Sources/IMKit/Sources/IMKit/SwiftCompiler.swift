/// The Swift compiler a module was built with.
///
/// Swift has no ABI stability across compiler versions on Linux, so a plugin must be built by the
/// host's compiler. The host compares the `swift_version` a plugin's descriptor carries with its
/// own and refuses a mismatch before it runs any of the plugin's Swift code.
public enum SwiftCompiler {
    /// The version of the compiler that compiled the *calling* module, e.g. `"6.3.1"`.
    ///
    /// It is emitted into the client, so a plugin reports its own compiler, not IMKit's.
    @_alwaysEmitIntoClient
    public static var version: String {
        #if compiler(>=7.0)
        return "7.0+"
        #elseif compiler(>=6.5)
        return "6.5+"
        #elseif compiler(>=6.4.2)
        return "6.4.2"
        #elseif compiler(>=6.4.1)
        return "6.4.1"
        #elseif compiler(>=6.4)
        return "6.4"
        #elseif compiler(>=6.3.3)
        return "6.3.3"
        #elseif compiler(>=6.3.2)
        return "6.3.2"
        #elseif compiler(>=6.3.1)
        return "6.3.1"
        #elseif compiler(>=6.3)
        return "6.3"
        #else
        return "older than 6.3"
        #endif
    }
}
