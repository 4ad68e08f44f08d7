/// Where a source refers to a file of imgbake's own images folder (written by an earlier build, or by
/// hand): what keeps that file alive, and what `--check` proves exists.
public struct OutputUse: Sendable, Hashable {
    /// The file's name in the images folder.
    public var name: String
    public var location: SourceLocation

    public init(name: String, location: SourceLocation) {
        self.name = name
        self.location = location
    }
}
