/// A downloaded original as the index remembers it.
public struct OriginalRecord: Sendable, Equatable {
    public var key: OriginalKey
    /// The URL last fetched under this key.
    public var url: String
    public var blob: BlobID
    public var format: ImageFormat
    /// Upright dimensions (after EXIF orientation); for an animation, of one frame.
    public var width: Int
    public var height: Int
    public var pages: Int
    public var bytes: Int
    public var validators: Validators
    /// Unix seconds of the last 200 or 304 from the origin.
    public var fetchedAt: Double
}

/// What the origin said about freshness and how to revalidate.
public struct Validators: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?
    public var cacheControl: String?
    public var expires: String?
    public var contentType: String?

    public init(etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil,
                expires: String? = nil, contentType: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.contentType = contentType
    }
}

/// An encoded variant as the index remembers it.
public struct VariantRecord: Sendable, Equatable {
    public var key: VariantKey
    public var originalBlob: BlobID
    /// The canonical spec string, then what the bytes are (`VariantSpec.recorded(as:)`: the quality an
    /// automatic one chose travels with the record, to the remote cache too).
    public var spec: String
    /// Nil when the variant was dropped: larger than the fallback at the same width.
    public var blob: BlobID?
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var bytes: Int
}

/// A remembered permanent failure.
public struct FailureRecord: Sendable, Equatable {
    public var key: OriginalKey
    public var url: String
    public var reason: String
    /// Unix seconds.
    public var failedAt: Double
}

