/// A fatal problem: the build cannot start or cannot write its results.
public struct BuildError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable { case usage, failed }
    public var kind: Kind
    public var message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

extension BuildError {
    /// A write that fails the build, said as the write error says it (the path once, the reason once).
    init(_ error: WriteError) {
        self.init(.failed, error.description)
    }
}
