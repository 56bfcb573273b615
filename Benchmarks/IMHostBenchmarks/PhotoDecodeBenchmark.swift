import CJPEG
import Foundation
import IMHost

/// What decoding a photo whole costs (``PhotoDecoder``, in its child: the bytes down a pipe,
/// every row decoded by libjpeg-turbo, a verdict back), against reading its header only, as a
/// host did before: a 1 MiB JPEG a camera might send, and the demo's flat.jpg.
enum PhotoDecodeBenchmark {
    static func run() throws -> [Row] {
        let decoder = PhotoDecoder(executable: products + "/imhost")
        let demo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/IMHostTerminal/Demo/flat.jpg")))
        // A first photo starts the child; its cost is its own row.
        let started = now()
        _ = try decoder.check(demo, limit: 16 << 20)
        let start = Double(now() - started)
        var rows: [Row] = []
        for (name, bytes, rounds) in [("a 1 MiB JPEG", camera(), 60), ("the demo's flat.jpg", demo, 400)] {
            let photo = try Photo.read(bytes, limit: 16 << 20)
            var decoded: [UInt64] = [], read: [UInt64] = []
            for round in 0..<rounds {
                let before = now()
                blackHole(try decoder.check(bytes, limit: 16 << 20))
                let middle = now()
                blackHole(try Photo.read(bytes, limit: 16 << 20))
                let after = now()
                if round >= rounds / 10 {
                    decoded.append(middle - before)
                    read.append(after - middle)
                }
            }
            let (p50, floor50) = (StoreBenchmark.percentile(decoded, 0.5), StoreBenchmark.percentile(read, 0.5))
            rows.append(Row(what: "photos", measure: "decode \(name) (\(photo.width)×\(photo.height), \(bytes.count / 1024) KiB) whole in the decoder child, p50",
                            figure: "\(format(p50 / 1000, 2)) ms", baseline: "its header read only: \(format(floor50)) µs",
                            ratio: "\(format(p50 / floor50, 0))x", target: "reported", met: nil))
        }
        rows.append(Row(what: "photos", measure: "the first photo of a process: the decoder child started, then flat.jpg decoded",
                        figure: "\(format(start / 1e6, 1)) ms", baseline: "-", ratio: "-", target: "reported", met: nil))
        precondition(decoder.started == 1, "the decoder child was not reused")
        return rows
    }

    /// A 1600×1200 JPEG of a gradient under noise at quality 86, just under 1 MiB, made by libjpeg-turbo.
    static func camera() -> [UInt8] {
        let (width, height) = (1600, 1200)
        // Heap-allocated: libjpeg keeps pointers to both between calls. Its default error handler
        // exits the process, which for a benchmark is as good as a thrown error.
        let errors = UnsafeMutablePointer<jpeg_error_mgr>.allocate(capacity: 1)
        let cinfo = UnsafeMutablePointer<jpeg_compress_struct>.allocate(capacity: 1)
        defer {
            jpeg_destroy_compress(cinfo)
            cinfo.deallocate()
            errors.deallocate()
        }
        cinfo.initialize(to: jpeg_compress_struct())
        cinfo.pointee.err = jpeg_std_error(errors)
        jpeg_CreateCompress(cinfo, JPEG_LIB_VERSION, MemoryLayout<jpeg_compress_struct>.size)
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        jpeg_mem_dest(cinfo, &buffer, &size)
        cinfo.pointee.image_width = JDIMENSION(width)
        cinfo.pointee.image_height = JDIMENSION(height)
        cinfo.pointee.input_components = 3
        cinfo.pointee.in_color_space = JCS_RGB
        jpeg_set_defaults(cinfo)
        jpeg_set_quality(cinfo, 86, 1)
        jpeg_start_compress(cinfo, 1)
        var generator = SystemRandomNumberGenerator()
        let row = UnsafeMutablePointer<JSAMPLE>.allocate(capacity: width * 3)
        defer { row.deallocate() }
        while cinfo.pointee.next_scanline < cinfo.pointee.image_height {
            let y = Int(cinfo.pointee.next_scanline)
            for x in 0..<width * 3 { row[x] = JSAMPLE(truncatingIfNeeded: (x / 3 + y) / 8 + Int.random(in: 0..<64, using: &generator)) }
            var rows: JSAMPROW? = row
            _ = jpeg_write_scanlines(cinfo, &rows, 1)
        }
        jpeg_finish_compress(cinfo)
        defer { free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }
}
