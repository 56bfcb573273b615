/// The content of a `text` message.
public struct TextContent: Codable, Sendable, Hashable {
    /// The text as typed.
    public var text: String
    /// Creates text content.
    public init(text: String) { self.text = text }
}

/// The content of an `image` message.
public struct ImageContent: Codable, Sendable, Hashable {
    /// Where the image is.
    public var url: String
    /// Its size in pixels.
    public var width: Int
    /// Its size in pixels.
    public var height: Int
    /// Creates image content.
    public init(url: String, width: Int, height: Int) {
        self.url = url
        self.width = width
        self.height = height
    }
}

/// The content of a `photo` message: the words sent with its photos, if any. The photos
/// themselves travel beside the payload and are shown by the host. Since IMKit 1.3.
public struct PhotoContent: Codable, Sendable, Hashable {
    /// A line sent with the photos, e.g. `"the view from the balcony"`.
    public var caption: String?
    /// Creates photo content.
    public init(caption: String? = nil) { self.caption = caption }
}

/// The content of a `voice` message. Since IMKit 1.4 a voice message a person records carries
/// its recording beside the payload (as a photo message carries its photos), and its `url` is
/// empty: the host never fetches a `url`, and shows and plays the recording it carries, with the
/// length it decoded from it rather than the payload's word.
public struct VoiceContent: Codable, Sendable, Hashable {
    /// Where the recording is, as its sender said (never fetched); empty when the message
    /// carries its recording.
    public var url: String
    /// Its length in seconds, as its sender said.
    public var seconds: Int
    /// Its length in milliseconds, as the sender's host decoded it, when the message carries
    /// its recording; `nil` otherwise. Since IMKit 1.4.
    public var milliseconds: Int?
    /// Creates voice content.
    public init(url: String, seconds: Int) {
        self.url = url
        self.seconds = seconds
    }
    /// Creates voice content with its length in milliseconds. Since IMKit 1.4.
    public init(url: String, seconds: Int, milliseconds: Int?) {
        self.url = url
        self.seconds = seconds
        self.milliseconds = milliseconds
    }
}

/// The content of a `file` message: a file a person sent (a résumé, a contract), which travels
/// beside the payload as a photo does; the host offers it for download, never opens it. Since
/// IMKit 1.4.
public struct FileContent: Codable, Sendable, Hashable {
    /// Its name, as its sender's host made it safe (one path component).
    public var name: String
    /// Its size in bytes, as its sender said (the host shows the size it holds).
    public var size: Int
    /// Creates file content.
    public init(name: String, size: Int) {
        self.name = name
        self.size = size
    }
}

/// The content of a `location` message.
public struct LocationContent: Codable, Sendable, Hashable {
    /// The place's name.
    public var name: String
    /// Degrees north.
    public var latitude: Double
    /// Degrees east.
    public var longitude: Double
    /// Creates location content.
    public init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// The host's built-in message builders, under keys with no line prefix.
public enum BuiltinBuilders {
    /// `text`: plain text, wrapped.
    public struct Text: MessageBuilder {
        /// `"text"`: a built-in key, without a line prefix.
        public let key = "text"
        /// The builder; the host registers it, and lines may use it to send typed content.
        public init() {}
        /// Reads the payload: the fast reader for flat JSON, else `JSONDecoder`.
        public func content(from payload: MessagePayload) throws -> TextContent {
            if let object = FlatJSON(payload.json), let text = object.string("text") { return TextContent(text: text) }
            return try payload.decode()
        }
        /// Lays the content out at the layout's width.
        public func model(for content: TextContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: layout.wrap(content.text))
        }
    }

    /// `image`: a frame with the image's size and address.
    public struct Image: MessageBuilder {
        /// `"image"`: a built-in key, without a line prefix.
        public let key = "image"
        /// The builder; the host registers it, and lines may use it to send typed content.
        public init() {}
        /// Reads the payload: the fast reader for flat JSON, else `JSONDecoder`.
        public func content(from payload: MessagePayload) throws -> ImageContent {
            if let object = FlatJSON(payload.json), let url = object.string("url"),
               let width = object.integer("width"), let height = object.integer("height") {
                return ImageContent(url: url, width: width, height: height)
            }
            return try payload.decode()
        }
        /// Lays the content out at the layout's width.
        public func model(for content: ImageContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content,
                         lines: layout.wrap("[Image \(content.width)×\(content.height)] \(content.url)"),
                         summary: "[Image]")
        }
        /// Opens the image viewer.
        public func didTap(_ content: ImageContent, message: ShownMessage, context: ChatContext) -> TapResult {
            .handled("opened image viewer: \(content.url)")
        }
    }

    /// `photo`: photos a person sent (the platform's Photo item, `/photo PATH`), with a caption
    /// when one was written. Its lines are the caption alone: each front end draws the photos
    /// themselves (the browser inline, the terminal as `[Photo W×H]`). Since IMKit 1.3.
    public struct Photo: MessageBuilder {
        /// `"photo"`: a built-in key, without a line prefix.
        public let key = "photo"
        /// The builder; the host registers it.
        public init() {}
        /// Reads the payload: `{}` or `{"caption":"…"}`.
        public func content(from payload: MessagePayload) throws -> PhotoContent {
            if let object = FlatJSON(payload.json) { return PhotoContent(caption: object.string("caption")) }
            return try payload.decode()
        }
        /// The caption, wrapped; no lines without one.
        public func model(for content: PhotoContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: content.caption.map(layout.wrap) ?? [], summary: "[Photo]")
        }
    }

    /// `voice`: the recording's length as a bar.
    public struct Voice: MessageBuilder {
        /// `"voice"`: a built-in key, without a line prefix.
        public let key = "voice"
        /// The builder; the host registers it, and lines may use it to send typed content.
        public init() {}
        /// Reads the payload: the fast reader for flat JSON, else `JSONDecoder`.
        public func content(from payload: MessagePayload) throws -> VoiceContent {
            if let object = FlatJSON(payload.json), let url = object.string("url"), let seconds = object.integer("seconds") {
                return VoiceContent(url: url, seconds: seconds, milliseconds: object.integer("milliseconds"))
            }
            return try payload.decode()
        }
        /// Lays the content out at the layout's width: its length and a bar as long. (A host
        /// draws a message that carries its recording from the recording itself.)
        public func model(for content: VoiceContent, layout: MessageLayout) throws -> MessageModel {
            let bar = String(repeating: "▮", count: min(max(1, content.seconds / 5), 12))
            return MessageModel(content: content, lines: layout.wrap("[Voice \(content.seconds)\"] \(bar)"),
                                summary: "[Voice]")
        }
    }

    /// `location`: the place's name and coordinates.
    public struct Location: MessageBuilder {
        /// `"location"`: a built-in key, without a line prefix.
        public let key = "location"
        /// The builder; the host registers it, and lines may use it to send typed content.
        public init() {}
        /// Reads the payload: the fast reader for flat JSON, else `JSONDecoder`.
        public func content(from payload: MessagePayload) throws -> LocationContent {
            if let object = FlatJSON(payload.json), let name = object.string("name"),
               let latitude = object.number("latitude"), let longitude = object.number("longitude") {
                return LocationContent(name: name, latitude: latitude, longitude: longitude)
            }
            return try payload.decode()
        }
        /// Lays the content out at the layout's width.
        public func model(for content: LocationContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content,
                         lines: layout.wrap("[Location] \(content.name)") + layout.wrap("(\(content.latitude), \(content.longitude))"),
                         summary: "[Location]")
        }
        /// Opens the map at the place.
        public func didTap(_ content: LocationContent, message: ShownMessage, context: ChatContext) -> TapResult {
            .handled("opened map at \(content.name) (\(content.latitude), \(content.longitude))")
        }
    }

    /// `file`: a file a person sent (`/file PATH`, the page's File button). Its line is the
    /// file's name and size; each front end offers the file it carries for download. Since IMKit 1.4.
    public struct File: MessageBuilder {
        /// `"file"`: a built-in key, without a line prefix.
        public let key = "file"
        /// The builder; the host registers it.
        public init() {}
        /// Reads the payload: `{"name":"…","size":N}`.
        public func content(from payload: MessagePayload) throws -> FileContent {
            if let object = FlatJSON(payload.json), let name = object.string("name"), let size = object.integer("size") {
                return FileContent(name: name, size: size)
            }
            return try payload.decode()
        }
        /// `[File NAME]`, wrapped.
        public func model(for content: FileContent, layout: MessageLayout) throws -> MessageModel {
            MessageModel(content: content, lines: layout.wrap("[File \(content.name)]"), summary: "[File]")
        }
    }

    /// Every built-in builder.
    public static let all: [any MessageBuilder] = [Text(), Image(), Voice(), Location(), Photo(), File()]
}
