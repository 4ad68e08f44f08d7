/// One message for the user about one place: `file:line:column: warning: message`.
/// Per-file problems are collected and processing continues; the exit code is decided at the end.
///
/// The severity says the outcome: `error` only for what fails the build (with `--strict`, a reference
/// left as it is; with `--frozen`, an image not in the cache; with `build.require_alt = "error"`, an
/// `<img>` without alt; with `--check`, whatever it lists), `warning` for everything else worth
/// saying, `note` for what `--verbose` shows.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Comparable {
        case note, warning, error

        private var rank: Int { self == .note ? 0 : self == .warning ? 1 : 2 }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    /// Why a reference stays as it was, where the build's outcome can depend on it.
    public enum KeptReference: Sendable, Hashable {
        /// Its image could not be had (HTTP 404, not an image, too large…): fails a `--strict` build.
        case imageFailed
        /// Its image is not in the cache and the network is off: fails a `--frozen` or `--strict` build.
        case notInCache
        /// Its image was had but the reference cannot be written (an absolute URL without
        /// `output.base_url`): fails a `--strict` build.
        case unwritable
    }

    /// What the build decides on a diagnostic by, where it decides anything: never its message's text.
    public enum Code: String, Sendable, Hashable {
        /// Said, and nothing more is decided on it.
        case general
        /// An `<img>` without alt: fails the build with `build.require_alt = "error"`, and is not
        /// something `--check` lists (the reference is localised all the same).
        case missingAlt = "missing-alt"
    }

    public var severity: Severity
    public var location: SourceLocation?
    public var message: String
    public var code: Code
    /// Set when the diagnostic is about a reference left as it is, and why.
    public var keptReference: KeptReference?

    public init(_ severity: Severity, _ message: String, at location: SourceLocation? = nil, code: Code = .general, kept: KeptReference? = nil) {
        self.severity = severity
        self.message = message
        self.location = location
        self.code = code
        keptReference = kept
    }

    public var description: String {
        let prefix = location.map { "\($0): " } ?? ""
        return "\(prefix)\(severity.rawValue): \(message)"
    }
}

/// A place in a site file: path relative to the site root, 1-based line, 1-based column counted in
/// characters (Unicode scalars), which is what editors show.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }

    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}

extension Diagnostic {
    /// Diagnostics without a place first, then by file, line, column.
    public static func byPlace(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        switch (a.location, b.location) {
        case (nil, nil): return a.message < b.message
        case (nil, _): return true
        case (_, nil): return false
        case (let x?, let y?): return x == y ? a.message < b.message : x < y
        }
    }
}
