#if canImport(Foundation)
import Foundation
#endif

/// The files the bundled demos name (the photo of the flat sent with a listing), from the
/// build's resources (`Sources/IMHostTerminal/Demo/`).
enum DemoFiles {
    /// The folder holding them, or `nil` when the build's resources cannot be found (a demo's
    /// photo is then refused in one line, as a missing file is).
    static let folder: String? = Bundle.module.url(forResource: "Demo", withExtension: nil)?.path
}
