/// The original's own bytes as a variant, when they are what a re-encode would show anyway: at the
/// source's width, in its format, with no pixel change to make (upright, no colour profile or CMYK,
/// 8 bits, a still image). Only the container is rewritten, to drop metadata; the compressed image
/// data is copied as it is. `Transformer.run` keeps whichever is smaller, this or the re-encode (a 64 px
/// PNG icon re-encoded grew from 1,492 to 1,824 bytes; a palette PNG from 217 KB to 619 KB).
enum SourcePassthrough {
    /// `bytes` without metadata, or nil when they cannot stand for a re-encode of themselves.
    /// `dropSRGBProfile`: the embedded profile is sRGB (checked by the caller), which a PNG may lose
    /// like any other metadata; any other profile refuses it. (A JPEG's and a WebP's profile goes with
    /// their metadata segments, and the caller allows them only without a profile or with sRGB.)
    static func stripped(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, dropSRGBProfile: Bool = false) -> [UInt8]? {
        switch format {
        case .png: png(bytes, dropSRGBProfile: dropSRGBProfile)
        case .jpeg: jpeg(bytes)
        case .webp: webp(bytes)
        default: nil // GIF (animations) and AVIF are always re-encoded; SVG is copied elsewhere
        }
    }

    /// PNG: the chunks that make the image (IHDR, PLTE, tRNS, IDAT, IEND) and nothing else: no text,
    /// EXIF, time, physical size, gamma or chromaticities (re-encodes carry none either, and libvips
    /// does not apply gAMA when it decodes, so dropping it keeps the two identical). Refused: 16-bit
    /// samples (outputs are 8-bit), an ICC profile (outputs are converted), animation (APNG) and
    /// anything malformed.
    static func png(_ bytes: UnsafeRawBufferPointer, dropSRGBProfile: Bool = false) -> [UInt8]? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count > 8 + 25, bytes.prefix(8).elementsEqual(signature) else { return nil }
        var output = signature
        output.reserveCapacity(bytes.count)
        var position = 8
        var sawHeader = false, sawEnd = false
        while position + 12 <= bytes.count {
            let length = Int(bytes[position]) << 24 | Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            let type = String(decoding: bytes[position + 4 ..< position + 8], as: UTF8.self)
            let end = position + 12 + length
            guard length >= 0, end <= bytes.count else { return nil }
            switch type {
            case "IHDR":
                // Bit depth at offset 8 of the data: 1, 2, 4 or 8 are kept as they are.
                guard length == 13, bytes[position + 8 + 8] <= 8 else { return nil }
                sawHeader = true
                output.append(contentsOf: bytes[position ..< end])
            case "PLTE", "tRNS", "IDAT":
                output.append(contentsOf: bytes[position ..< end])
            case "IEND":
                output.append(contentsOf: bytes[position ..< end])
                sawEnd = true
            case "iCCP" where dropSRGBProfile:
                break
            case "iCCP", "acTL", "fcTL", "fdAT":
                return nil
            default:
                // Critical chunks (upper-case first letter) we do not know: leave the image alone.
                if let first = type.utf8.first, first & 0x20 == 0 { return nil }
            }
            if sawEnd { break }
            position = end
        }
        return sawHeader && sawEnd ? output : nil
    }

    /// JPEG: every marker segment except APP1…APP15 (EXIF, XMP, ICC, IPTC, …; APP14 "Adobe" is kept,
    /// it says how the colour channels are coded) and comments, the entropy-coded data of each scan as
    /// it is, and nothing after EOI (a polyglot's payload often sits there). Refused: anything but
    /// 8-bit samples, and malformed or unterminated files.
    static func jpeg(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(bytes.count)
        var position = 2
        while position + 2 <= bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            let marker = bytes[position + 1]
            if marker == 0xFF { position += 1; continue } // fill byte
            if marker == 0xD9 { // end of image
                output.append(contentsOf: [0xFF, 0xD9])
                return output
            }
            guard position + 4 <= bytes.count else { return nil }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            let end = position + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            switch marker {
            case 0xDA: // start of scan: the header, then entropy-coded data up to the next marker
                let data = entropyCodedEnd(bytes, from: end)
                output.append(contentsOf: bytes[position ..< data])
                position = data
                continue
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard length >= 3, bytes[position + 4] == 8 else { return nil } // sample precision
                output.append(contentsOf: bytes[position ..< end])
            case 0xE1...0xED, 0xEF, 0xFE:
                break // APP1–APP13, APP15, COM: metadata
            default:
                output.append(contentsOf: bytes[position ..< end])
            }
            position = end
        }
        return nil
    }

    /// Where a scan's entropy-coded data ends: at the first marker that is not a stuffed 0xFF00, a
    /// restart marker (RST0–7) or fill bytes before one.
    private static func entropyCodedEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var position = start
        while position + 1 < bytes.count {
            if bytes[position] == 0xFF {
                var next = position + 1
                while next < bytes.count && bytes[next] == 0xFF { next += 1 }
                guard next < bytes.count else { return bytes.count }
                let marker = bytes[next]
                if marker != 0x00 && !(0xD0...0xD7).contains(marker) { return next - 1 }
                position = next + 1
            } else {
                position += 1
            }
        }
        return bytes.count
    }

    /// WebP: the container without EXIF, XMP and ICC chunks (the same cleaning as every WebP output).
    static func webp(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        let array = Array(bytes)
        let stripped = WebPContainer.strippingMetadata(array)
        return stripped.count >= 12 ? stripped : nil
    }
}
