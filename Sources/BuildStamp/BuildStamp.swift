/// How this binary was built, for display only (`imgbake --version`, the report): never part of a
/// cache key or a build fingerprint, so a build from a modified tree names and makes the same files as
/// a clean one.
public enum BuildStamp {
    /// The tree it was built from had uncommitted changes (`git status` listed something), as the
    /// Makefile found it and passed it on through IMGBAKE_BUILD_STATE (Package.swift). False for a
    /// plain `swift build`, which does not look.
    public static var dirty: Bool {
        #if IMGBAKE_DIRTY
        true
        #else
        false
        #endif
    }
}
