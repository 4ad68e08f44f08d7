import CExif
import CShims.Stack

/// The libexif this binary links, e.g. "0.6.24" (libexif has no call that says; the stack records it).
public enum LibExif {
    public static let version: String = IMGBAKE_STACK_EXIF_VERSION
}

/// The EXIF facts imgbake uses, read with libexif as typed values: credits for templates (the outputs
/// themselves are stripped) and checks that privacy-relevant tags are gone.
public struct ExifSummary: Sendable, Equatable {
    public var orientation: Int?
    public var copyright: String?
    public var artist: String?
    /// `DateTimeOriginal` as written (`YYYY:MM:DD HH:MM:SS`).
    public var captureDate: String?
    /// True when a GPS IFD with at least one entry is present.
    public var hasGPS: Bool
    /// True when the camera's serial number (BodySerialNumber) is present.
    public var hasSerialNumber: Bool
    /// True when a MakerNote is present.
    public var hasMakerNote: Bool
}

public enum ExifReader {
    /// Reads an EXIF block: either a JPEG file or a raw `Exif\0\0` TIFF block (what libvips exposes as
    /// `exif-data` for JPEG, PNG, WebP and AVIF alike). Nil when there is no EXIF.
    /// MakerNotes are never parsed (libexif's MakerNote parsers have had CVEs).
    public static func read(_ bytes: UnsafeRawBufferPointer) -> ExifSummary? {
        guard let base = bytes.baseAddress, bytes.count > 6, let data = exif_data_new() else { return nil }
        defer { exif_data_unref(data) }
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_set_option(data, EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE)
        exif_data_load_data(data, base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
        let order = exif_data_get_byte_order(data)

        func entry(_ ifd: ExifIfd, _ tag: ExifTag) -> UnsafeMutablePointer<ExifEntry>? {
            guard let content = content(of: data, ifd) else { return nil }
            return exif_content_get_entry(content, tag)
        }
        func text(_ ifd: ExifIfd, _ tag: ExifTag) -> String? {
            guard let e = entry(ifd, tag), let raw = e.pointee.data, e.pointee.size > 0 else { return nil }
            let bytes = UnsafeBufferPointer(start: raw, count: Int(e.pointee.size)).prefix { $0 != 0 }
            let value = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: " ")
            return value.isEmpty ? nil : value
        }
        let count = { (ifd: ExifIfd) -> Int in Int(content(of: data, ifd)?.pointee.count ?? 0) }
        guard count(EXIF_IFD_0) + count(EXIF_IFD_EXIF) + count(EXIF_IFD_GPS) > 0 else { return nil }

        var orientation: Int?
        if let e = entry(EXIF_IFD_0, EXIF_TAG_ORIENTATION), let raw = e.pointee.data, e.pointee.size >= 2 {
            orientation = Int(exif_get_short(raw, order))
        }
        return ExifSummary(
            orientation: orientation,
            copyright: text(EXIF_IFD_0, EXIF_TAG_COPYRIGHT),
            artist: text(EXIF_IFD_0, EXIF_TAG_ARTIST),
            captureDate: text(EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL),
            hasGPS: count(EXIF_IFD_GPS) > 0,
            hasSerialNumber: entry(EXIF_IFD_EXIF, ExifTag(rawValue: 0xA431)) != nil,
            hasMakerNote: entry(EXIF_IFD_EXIF, EXIF_TAG_MAKER_NOTE) != nil)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// `ExifData.ifd` is a C array, imported as a tuple; this indexes it.
private func content(of data: UnsafeMutablePointer<ExifData>, _ which: ExifIfd) -> UnsafeMutablePointer<ExifContent>? {
    withUnsafeBytes(of: data.pointee.ifd) { raw in
        let contents = raw.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)
        let index = Int(which.rawValue)
        return index < contents.count ? contents[index] : nil
    }
}
