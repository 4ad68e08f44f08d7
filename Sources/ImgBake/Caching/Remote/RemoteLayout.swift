/// `layout.json` at the remote's root: which layouts of imgbake's remote cache the store holds, each
/// under a folder of its own (`v2/`). Read once per build, before anything else, so that:
///
/// - a store without layout 2 (empty, or written by an older imgbake only) is known to have nothing
///   this build can read: no request is made for its images, and a writing build adds 2 to the list;
/// - a store also holding a newer layout is said to (one warning) and still used through layout 2;
/// - a `layout.json` that is not imgbake's turns the remote off for the build (one warning): nothing
///   is read from or written to a store this version does not understand.
///
/// Layout 1 (imgbake 0.1.0: `cas/` and `ac/v1/`) wrote no marker; a build finding no marker asks for
/// its first image's layout 1 record once, to say that the store holds layout 1 objects it ignores.
struct RemoteLayout: Codable, Equatable {
    /// The layout this version reads and writes.
    static let version = 2

    var layouts: [Int]
    var about: String? = "imgbake remote cache: each layout's objects are under v<N>/ (layout 1: cas/ and ac/v1/); see docs/REMOTE-CACHE.md"

    init(layouts: [Int]) { self.layouts = layouts.sorted() }

    /// What `layout.json`'s bytes say, or nil when they are not a layout list.
    static func parse(_ bytes: [UInt8]) -> RemoteLayout? {
        guard let layout = RemoteJSON.decode(RemoteLayout.self, bytes), !layout.layouts.isEmpty,
              layout.layouts.allSatisfy({ (1...1000).contains($0) }) else { return nil }
        return layout
    }

    var bytes: [UInt8] { RemoteJSON.encode(self) }

    /// With this version's layout added.
    var adding: RemoteLayout { RemoteLayout(layouts: Array(Set(layouts + [Self.version]))) }

    var holdsThisVersion: Bool { layouts.contains(Self.version) }
    var newer: [Int] { layouts.filter { $0 > Self.version } }
}

/// What the build found at `layout.json`.
enum LayoutState: Sendable, Equatable {
    /// Layout 2 is there: packs are read.
    case present
    /// No layout 2 yet: nothing to read (and, when writing, the marker was written or will be).
    case empty
    /// The remote is not used: its marker is not imgbake's, or the remote failed.
    case unusable
}
