@testable import ImgBake

/// A site's stylesheets and scripts in memory (`StyleLibrary`), by site path: what `PageLayout` reads,
/// without a site folder. A path not given cannot be read.
package struct InMemoryStyles: StyleLibrary {
    package var stylesheets: [String: String]
    package var scripts: [String: String]

    package init(stylesheets: [String: String] = [:], scripts: [String: String] = [:]) {
        self.stylesheets = stylesheets
        self.scripts = scripts
    }

    package func stylesheet(_ path: String) -> StyleSheet? { stylesheets[path].map { StyleSheet.parse(Array($0.utf8)) } }
    package func inline(_ text: String) -> StyleSheet { StyleSheet.parse(Array(text.utf8)) }
    package func scriptMayRestructureImages(_ path: String) -> Bool? { scripts[path].map { ScriptCheck.mayRestructureImages($0.utf8) } }
}
