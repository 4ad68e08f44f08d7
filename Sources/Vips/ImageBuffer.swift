/// Encoded image bytes at a stable address. libvips reads lazily from the buffer it is given, so the
/// buffer must outlive every image made from it; `VipsImage` keeps a reference for that reason.
public final class ImageBuffer: @unchecked Sendable {
    // @unchecked: the compiler cannot see that a raw pointer (the memory libvips reads from) is safe to
    // share; it is, being immutable after init. The class exists only to own that memory.
    let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes`. Contiguous collections (`[UInt8]`, `ArraySlice`, `Data`…) are copied with one
    /// `memcpy`: the generic element-by-element path of the standard library is not specialised
    /// across modules and costs hundreds of instructions per byte, which for a cold build's
    /// originals is a visible share of its CPU.
    public init(_ bytes: some Collection<UInt8>) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { source in
            storage.copyMemory(from: UnsafeRawBufferPointer(source))
            return true
        }
        if copied == nil {
            _ = storage.initializeMemory(as: UInt8.self, from: bytes)
        }
        self.storage = storage
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
