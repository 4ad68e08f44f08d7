/// Metadata chunks of a WebP file (RIFF container). libvips 8.14's WebP saver ignores `strip` and
/// writes an EXIF chunk of its own, so outputs are checked and cleaned here, not trusted to an option.
enum WebPContainer {
    /// `bytes` without the `EXIF`, `XMP ` and `ICCP` chunks (`EXIF` kept when `keepEXIF`), with the
    /// `VP8X` flags and the RIFF size updated. Anything that is not a well-formed WebP comes back as is.
    static func strippingMetadata(_ bytes: [UInt8], keepEXIF: Bool = false) -> [UInt8] {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return bytes }
        var dropped: Set<String> = ["XMP ", "ICCP"]
        if !keepEXIF { dropped.insert("EXIF") }
        var output = Array(bytes[0..<12])
        var position = 12
        var vp8xFlags: Int?
        while position + 8 <= bytes.count {
            let fourCC = String(decoding: bytes[position..<position + 4], as: UTF8.self)
            let size = Int(bytes[position + 4]) | Int(bytes[position + 5]) << 8 | Int(bytes[position + 6]) << 16 | Int(bytes[position + 7]) << 24
            let end = position + 8 + size + (size & 1)
            guard end <= bytes.count || (end == bytes.count + 1 && size & 1 == 1) else { return bytes }
            if !dropped.contains(fourCC) {
                if fourCC == "VP8X" { vp8xFlags = output.count + 8 }
                output.append(contentsOf: bytes[position..<min(end, bytes.count)])
            }
            position = end
        }
        if let flags = vp8xFlags {
            // VP8X flags: ICC 0x20, alpha 0x10, EXIF 0x08, XMP 0x04, animation 0x02.
            var mask: UInt8 = 0x20 | 0x04
            if !keepEXIF { mask |= 0x08 }
            output[flags] &= ~mask
        }
        let riffSize = UInt32(output.count - 8)
        output[4] = UInt8(riffSize & 0xFF)
        output[5] = UInt8(riffSize >> 8 & 0xFF)
        output[6] = UInt8(riffSize >> 16 & 0xFF)
        output[7] = UInt8(riffSize >> 24 & 0xFF)
        return output
    }
}
