/// Encoded image bytes at a stable address. libvips reads lazily from the buffer it is given, so the
/// buffer must outlive every image made from it; `VipsImage` keeps a reference for that reason.
public final class ImageBuffer: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe; the class exists only to own memory.
    let storage: UnsafeMutableRawBufferPointer

    public init(_ bytes: some Collection<UInt8>) {
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
        count = bytes.count
    }

    public let count: Int

    /// The bytes, read in place (for checks of the container before libvips sees it).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage.baseAddress, count: count))
    }

    var baseAddress: UnsafeRawPointer { UnsafeRawPointer(storage.baseAddress!) }

    deinit { storage.deallocate() }
}
