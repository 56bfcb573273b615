#if canImport(Foundation)
import Foundation
#endif

/// The page's own files: its script, its style and its icon, a few files in the repository
/// (`Sources/IMHostWeb/Assets/`), read once from the build's resources. Nothing is loaded from
/// anywhere else.
public enum WebAssets {
    /// An asset: its bytes and its type.
    public struct Asset: Sendable {
        public var bytes: [UInt8]
        public var contentType: String
    }

    /// The assets by path (`/static/app.js`), read when first asked for.
    public static let all: [String: Asset] = {
        var assets: [String: Asset] = [:]
        for (name, type) in [("app.js", "text/javascript; charset=utf-8"), ("app.css", "text/css; charset=utf-8"), ("icon.svg", "image/svg+xml")] {
            let parts = name.split(separator: ".")
            guard let url = Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: "Assets"),
                  let data = try? Data(contentsOf: url) else { continue }
            assets["/static/" + name] = Asset(bytes: Array(data), contentType: type)
        }
        return assets
    }()
}
