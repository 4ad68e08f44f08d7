/// What imgbake needs to know of an embedded ICC profile: whether it is sRGB, the web's own colour
/// space. Such a profile changes no colour when dropped (browsers assume sRGB), so a source carrying
/// it can be sent as it is, without the profile, instead of re-encoded (cameras and editors embed
/// "sRGB IEC61966-2.1" in most photos).
enum ICCProfile {
    /// True for an RGB display profile whose description names sRGB (a v2 `desc` or a v4 `mluc` tag).
    static func isSRGB(_ profile: [UInt8]) -> Bool {
        guard profile.count >= 132, String(decoding: profile[16..<20], as: UTF8.self) == "RGB ",
              let description = description(profile) else { return false }
        return description.contains("sRGB")
    }

    static func description(_ p: [UInt8]) -> String? {
        let count = Int(p.bigEndian32(at: 128))
        guard count < 1000, 132 + count * 12 <= p.count else { return nil }
        for entry in 0..<count {
            let at = 132 + entry * 12
            guard String(decoding: p[at..<at + 4], as: UTF8.self) == "desc" else { continue }
            let offset = Int(p.bigEndian32(at: at + 4)), size = Int(p.bigEndian32(at: at + 8))
            guard offset >= 0, size >= 12, offset + size <= p.count else { return nil }
            let tag = p[offset..<offset + size]
            switch String(decoding: tag.prefix(4), as: UTF8.self) {
            case "desc": // textDescriptionType: a count, then ASCII
                let length = Int(p.bigEndian32(at: offset + 8))
                guard length > 0, offset + 12 + length <= offset + size else { return nil }
                return String(decoding: p[offset + 12..<offset + 12 + length].prefix { $0 != 0 }, as: UTF8.self)
            case "mluc": // multiLocalizedUnicodeType: the first record's UTF-16BE text
                guard size >= 28 else { return nil }
                let length = Int(p.bigEndian32(at: offset + 20)), start = offset + Int(p.bigEndian32(at: offset + 24))
                guard start + length <= offset + size else { return nil }
                let units = stride(from: start, to: start + length - 1, by: 2).map { UInt16(p[$0]) << 8 | UInt16(p[$0 + 1]) }
                return String(decoding: units, as: UTF16.self)
            default:
                return nil
            }
        }
        return nil
    }
}

private extension [UInt8] {
    func bigEndian32(at index: Int) -> UInt32 {
        guard index + 4 <= count else { return 0 }
        return UInt32(self[index]) << 24 | UInt32(self[index + 1]) << 16 | UInt32(self[index + 2]) << 8 | UInt32(self[index + 3])
    }
}
