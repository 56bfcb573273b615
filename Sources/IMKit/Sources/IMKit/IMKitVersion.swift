/// The version of IMKit.
///
/// IMKit follows semantic versioning: every 1.x release keeps the public API and ABI of 1.0
/// (only additions), so a line built against 1.0 loads in a host with any IMKit 1.x, built by
/// the same Swift compiler (``SwiftCompiler``). The repository checks this in CI against the API
/// baseline of 1.0.
public enum IMKitVersion {
    /// The version of the libIMKit.so running, e.g. `"1.0.0"`.
    public static let current = "1.4.0"
}
