/// Photo credits read from an original's EXIF (typed, with libexif), for templates: the outputs
/// themselves carry no metadata unless asked.
public struct Credits: Sendable, Equatable {
    public var copyright: String?
    public var artist: String?
    /// `DateTimeOriginal`, as written (`YYYY:MM:DD HH:MM:SS`).
    public var captured: String?

    public init(copyright: String? = nil, artist: String? = nil, captured: String? = nil) {
        self.copyright = copyright
        self.artist = artist
        self.captured = captured
    }

    public var isEmpty: Bool { copyright == nil && artist == nil && captured == nil }
}
