#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMKit

/// A picture a line ships (`LineRegistrar.registerPicture`), checked, as it crosses to whoever
/// serves it: the line's version is part of its name, so a page of an older build keeps its own.
public struct ShippedPicture: Codable, Sendable, Equatable {
    public var line: String
    public var version: String
    public var name: String
    public var photo: Photo
    public var bytes: [UInt8]

    public init(line: String, version: String, name: String, photo: Photo, bytes: [UInt8]) {
        self.line = line
        self.version = version
        self.name = name
        self.photo = photo
        self.bytes = bytes
    }

    private enum CodingKeys: String, CodingKey { case line, version, name, photo, data }

    // The bytes as base64 rather than an array of numbers: a quarter more, not four times.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        line = try container.decode(String.self, forKey: .line)
        version = try container.decode(String.self, forKey: .version)
        name = try container.decode(String.self, forKey: .name)
        photo = try container.decode(Photo.self, forKey: .photo)
        guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .data)) else {
            throw DecodingError.dataCorruptedError(forKey: .data, in: container, debugDescription: "not base64")
        }
        bytes = [UInt8](data)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(line, forKey: .line)
        try container.encode(version, forKey: .version)
        try container.encode(name, forKey: .name)
        try container.encode(photo, forKey: .photo)
        try container.encode(Data(bytes).base64EncodedString(), forKey: .data)
    }
}

/// The build of one line a worker serves: the one it opened, or the one it would open.
public struct LineBuild: Codable, Sendable, Equatable {
    public var line: String
    /// The plugin's version, as its descriptor says.
    public var version: String
    /// The plugin file, absolute.
    public var file: String
    /// The identity of the file when the worker examined or opened it.
    public var identity: FileIdentity
    /// Whether the worker has opened the line's library (its code runs in the chat).
    public var opened: Bool

    public init(line: String, version: String, file: String, identity: FileIdentity, opened: Bool) {
        self.line = line
        self.version = version
        self.file = file
        self.identity = identity
        self.opened = opened
    }
}
