import CExif

/// Writes a new EXIF block holding only chosen tags, for outputs that keep credits while everything
/// else (GPS, serial numbers, MakerNotes) goes. libvips 8.14 can rebuild EXIF from its metadata
/// fields, but that mangles `Copyright`, so the block is made here, typed, with libexif.
public enum ExifWriter {
    /// An `Exif\0\0` block with IFD0 `Copyright` and `Artist` (those given), or nil when neither is.
    public static func block(copyright: String?, artist: String?) -> [UInt8]? {
        guard copyright != nil || artist != nil, let memory = exif_mem_new_default() else { return nil }
        defer { exif_mem_unref(memory) }
        guard let data = exif_data_new_mem(memory) else { return nil }
        defer { exif_data_unref(data) }
        exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL)
        exif_data_set_data_type(data, EXIF_DATA_TYPE_COMPRESSED)
        guard let ifd0 = withUnsafeBytes(of: data.pointee.ifd, { $0.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self)[0] })
        else { return nil }
        for (tag, value) in [(EXIF_TAG_COPYRIGHT, copyright), (EXIF_TAG_ARTIST, artist)] {
            guard let value, let entry = exif_entry_new_mem(memory) else { continue }
            // ASCII with its terminating NUL (Copyright's optional editor part is left out).
            let bytes = Array(value.utf8) + [0]
            guard let storage = exif_mem_alloc(memory, ExifLong(bytes.count)) else { exif_entry_unref(entry); continue }
            storage.copyMemory(from: bytes, byteCount: bytes.count)
            entry.pointee.tag = tag
            entry.pointee.format = EXIF_FORMAT_ASCII
            entry.pointee.components = UInt(bytes.count)
            entry.pointee.size = UInt32(bytes.count)
            entry.pointee.data = storage.assumingMemoryBound(to: UInt8.self)
            exif_content_add_entry(ifd0, entry)
            exif_entry_unref(entry)
        }
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(data, &buffer, &size)
        guard let buffer, size > 0 else { return nil }
        defer { exif_mem_free(memory, buffer) }
        let block = Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
        // libvips expects the APP1 payload, which starts with "Exif\0\0".
        let header: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        return block.starts(with: header) ? block : header + block
    }
}
