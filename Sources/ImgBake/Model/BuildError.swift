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
