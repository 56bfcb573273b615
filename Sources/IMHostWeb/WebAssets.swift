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
        /// A digest of the bytes (FNV-1a, 64 bits, in hex): a document names the asset with it,
        /// so a browser keeps the asset as long as it likes and a new build's is a new address.
        public var version: String
    }

    /// The assets by path (`/static/app.js`), read when first asked for.
    public static let all: [String: Asset] = {
        var assets: [String: Asset] = [:]
        for (name, type) in [("app.js", "text/javascript; charset=utf-8"), ("app.css", "text/css; charset=utf-8"), ("dark.css", "text/css; charset=utf-8"),
                             ("workbench.js", "text/javascript; charset=utf-8"), ("icon.svg", "image/svg+xml")] {
            let parts = name.split(separator: ".")
            guard let url = Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]), subdirectory: "Assets"),
                  let data = try? Data(contentsOf: url) else { continue }
            let bytes = Array(data)
            assets["/static/" + name] = Asset(bytes: bytes, contentType: type, version: digest(bytes))
        }
        return assets
    }()

    /// The address a document names `name` by (`/static/app.js?v=…`): kept by the browser for a
    /// year without asking again (``cacheControl(_:version:)``).
    public static func href(_ name: String) -> String {
        let path = "/static/" + name
        return all[path].map { path + "?v=" + $0.version } ?? path
    }

    /// How long a browser may keep `asset` asked for with `version`: for ever when it is this
    /// build's (the address changes with the bytes), else asked again each time.
    public static func cacheControl(_ asset: Asset, version: String?) -> String {
        version == asset.version ? "public, max-age=31536000, immutable" : "no-cache"
    }

    /// FNV-1a over `bytes`: a digest to tell builds' assets apart, not a secret.
    static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
