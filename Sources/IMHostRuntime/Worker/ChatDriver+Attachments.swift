#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMHost
import IMKit
#if canImport(Glibc)
import Glibc
#endif

/// What a person sends beside text: photos read from files, a voice recording, a file. Each is
/// read and checked whole (decoded, for photos and recordings; named safely and typed by its
/// bytes, for a file) before anything is stored.
extension ChatDriver {
    /// `~/` at the start of a path as the user's home.
    static func expandingHome(_ file: String) -> String {
        let home = getenv("HOME").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        return file.hasPrefix("~/") && home != nil ? home! + file.dropFirst() : file
    }

    /// Sends a voice message of `bytes`, decoded whole first: its length is what the samples
    /// say, put in the payload for hosts that do not read the recording.
    func sendVoice(_ bytes: [UInt8], file: String, verb: String, on page: ChatPage) -> Outcome {
        let voice: Voice
        do throws(Voice.Refusal) {
            voice = try PhotoDecoder.shared.checkVoice(bytes, limit: min(Voice.byteLimit, host.config.limits.photoBytes))
        } catch {
            return .refused(ChatRefusal(.notAVoice, verb, detail: "\(error)", file: file))
        }
        let payload = #"{"url":"","seconds":\#((voice.milliseconds + 500) / 1000),"milliseconds":\#(voice.milliseconds)}"#
        do throws(SendError) {
            try page.send(key: "voice", payload: MessagePayload(json: payload), voice: .voice(voice, bytes: bytes))
            return Outcome(redraw: true)
        } catch {
            return .refused(ChatRefusal(.notSent, verb, detail: "\(error)"))
        }
    }

    /// Sends `bytes` as a file named `name` (made safe), its type read from its bytes, its name
    /// and size in the payload for hosts that show only the payload.
    func sendFile(_ bytes: [UInt8], name: String, file: String, verb: String, on page: ChatPage) -> Outcome {
        let shared: SharedFile
        do throws(SharedFile.Refusal) {
            shared = try SharedFile.read(name: name, bytes: bytes, limit: host.config.limits.fileBytes)
        } catch {
            return .refused(ChatRefusal(.notAFile, verb, detail: "\(error)", file: file))
        }
        let payload = #"{"name":\#(JSONNode.quoted(shared.name)),"size":\#(shared.size)}"#
        do throws(SendError) {
            try page.send(key: "file", payload: MessagePayload(json: payload), file: .file(shared, bytes: bytes))
            return Outcome(redraw: true)
        } catch {
            return .refused(ChatRefusal(.notSent, verb, detail: "\(error)"))
        }
    }

    /// Sends (or stores as the peer's) a message with the photos in `files`, each read and
    /// checked whole before anything is stored.
    func withPhotos(key: String, payload: String, files: [String], receive: Bool, verb: String, on page: ChatPage) -> Outcome {
        var photos: [AttachedPhoto] = []
        let limit = host.config.limits.photoBytes
        for file in files {
            let path = Self.expandingHome(file)
            let bytes: [UInt8]
            do throws(FileSystem.Failure) {
                // A byte more than the limit says "too large" without reading a huge file.
                bytes = try FileSystem.readBytes(path, limit: limit + 1)
            } catch {
                return .refused(ChatRefusal(.unreadableFile, verb, detail: "\(error)", file: file))
            }
            // Read to one byte past the limit: its size is not known past that.
            guard bytes.count <= limit else { return .refused(ChatRefusal(.photoTooLarge, verb, file: file, limit: limit)) }
            do throws(Photo.Refusal) {
                photos.append(try AttachedPhoto.reading(bytes, limit: limit))
            } catch {
                return .refused(ChatRefusal(.notAPhoto, verb, detail: "\(error)", file: file))
            }
        }
        return send(key: key, payload: payload, photos: photos, receive: receive, verb: verb, on: page)
    }

    /// Sends (or stores as the peer's) a message with `photos`, read and checked already.
    func send(key: String, payload: String, photos: [AttachedPhoto], receive: Bool, verb: String, on page: ChatPage) -> Outcome {
        do throws(SendError) {
            if receive {
                try page.receive(key: key, payload: MessagePayload(json: payload), photos: photos)
            } else {
                try page.send(key: key, payload: MessagePayload(json: payload), photos: photos)
            }
            return Outcome(redraw: true)
        } catch {
            return .refused(ChatRefusal(receive ? .notStored : .notSent, verb, detail: "\(error)"))
        }
    }
}
