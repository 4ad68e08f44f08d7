/// Checks of a file's structure that libvips 8.14's loaders do not make, run before any decoding.
enum ContainerCheck {
    /// Why `bytes` must not be decoded as `format`, or nil.
    static func problem(in bytes: UnsafeRawBufferPointer, format: ImageFormat) -> String? {
        switch format {
        case .gif: gifTruncation(bytes)
        case .avif: foreignHEIFItem(bytes).map { "not AVIF: its image is coded as \($0), and only AV1 is accepted" }
        default: nil
        }
    }

    // MARK: GIF

    /// libnsgif decodes the frames a truncated GIF still has and drops the rest without an error, so a
    /// cut-off animation would be published as a shorter one. Walks the blocks: data that ends inside
    /// the header or a block is truncated. (Ending between blocks without the trailer is accepted, as
    /// browsers do.)
    static func gifTruncation(_ b: UnsafeRawBufferPointer) -> String? {
        let truncated = "GIF is truncated"
        guard b.count >= 13 else { return "\(truncated) (\(b.count) bytes, shorter than its header)" }
        var position = 13
        func skipColourTable(flags: UInt8) { if flags & 0x80 != 0 { position += 3 << (Int(flags & 0x07) + 1) } }
        /// Skips data sub-blocks up to and including the zero-length terminator; false if the data ends first.
        func skipSubBlocks() -> Bool {
            while position < b.count {
                let length = Int(b[position])
                position += 1 + length
                if length == 0 { return true }
            }
            return false
        }
        skipColourTable(flags: b[10])
        var frames = 0
        while position < b.count {
            switch b[position] {
            case 0x3B:
                return nil
            case 0x21:
                position += 2
                guard skipSubBlocks() else { return "\(truncated) (the data ends inside an extension after frame \(frames))" }
            case 0x2C:
                frames += 1
                guard position + 10 <= b.count else { return "\(truncated) (the data ends inside frame \(frames))" }
                let flags = b[position + 9]
                position += 10
                skipColourTable(flags: flags)
                position += 1 // LZW minimum code size
                guard skipSubBlocks() else { return "\(truncated) (the data ends inside frame \(frames))" }
            default:
                return nil // not a block: the decoder reports what is wrong
            }
        }
        return position > b.count ? "\(truncated) (the data ends inside a block after frame \(frames))" : nil
    }

    // MARK: AVIF

    /// AVIF is HEIF with AV1 inside, but libheif decodes whatever the items are coded with: a file whose
    /// brands say AVIF can carry HEVC (libde265) or other codecs imgbake does not mean to expose. Every
    /// item must be AV1, a derivation of items (grid, overlay, identity) or metadata. Returns the first
    /// other item type; nil when all are allowed or the boxes cannot be read (libheif then refuses).
    static func foreignHEIFItem(_ b: UnsafeRawBufferPointer) -> String? {
        let allowed: Set<String> = ["av01", "grid", "iovl", "iden", "Exif", "mime", "uri "]
        guard let meta = boxes(b, 0..<b.count).first(where: { $0.type == "meta" }), meta.body.count >= 4,
              let iinf = boxes(b, meta.body.lowerBound + 4..<meta.body.upperBound).first(where: { $0.type == "iinf" }),
              iinf.body.count >= 6
        else { return nil }
        let entries = b[iinf.body.lowerBound] == 0 ? iinf.body.lowerBound + 6 : iinf.body.lowerBound + 8
        for infe in boxes(b, min(entries, iinf.body.upperBound)..<iinf.body.upperBound) where infe.type == "infe" {
            let version = b[infe.body.lowerBound]
            guard version >= 2 else { continue } // versions 0 and 1 have no item type
            let typeAt = infe.body.lowerBound + 4 + (version == 2 ? 2 : 4) + 2
            guard typeAt + 4 <= infe.body.upperBound else { return "an unreadable item" }
            let type = fourCC(b, typeAt)
            if !allowed.contains(type) { return type }
        }
        return nil
    }

    /// The ISO BMFF boxes in `range`: type and body. Stops at the first box that does not fit.
    static func boxes(_ b: UnsafeRawBufferPointer, _ range: Range<Int>) -> [(type: String, body: Range<Int>)] {
        var found: [(type: String, body: Range<Int>)] = []
        var position = range.lowerBound
        while position + 8 <= range.upperBound {
            var size = UInt64(bigEndian: b, at: position, count: 4)
            var header = 8
            if size == 1 {
                guard position + 16 <= range.upperBound else { break }
                size = UInt64(bigEndian: b, at: position + 8, count: 8)
                header = 16
            } else if size == 0 {
                size = UInt64(range.upperBound - position)
            }
            guard size >= UInt64(header), size <= UInt64(range.upperBound - position) else { break }
            found.append((fourCC(b, position + 4), position + header..<position + Int(size)))
            position += Int(size)
        }
        return found
    }

    private static func fourCC(_ b: UnsafeRawBufferPointer, _ at: Int) -> String {
        String(decoding: b[at..<at + 4], as: UTF8.self)
    }
}

private extension UInt64 {
    init(bigEndian b: UnsafeRawBufferPointer, at offset: Int, count: Int) {
        self = b[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
