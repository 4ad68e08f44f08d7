import Foundation
import Testing
import ImgBakeTestSupport

/// The folders of the library follow the data flow and depend on each other one way only; SQL stays
/// behind the cache's API. Found from the sources: a folder depends on another when one of its files
/// names a type declared at the top level of the other.
@Suite struct LayeringTests {
    static let library = Paths.root + "/Sources/ImgBake"

    /// Folder → its Swift sources, comments and string literals removed.
    static func sources() throws -> [String: [(file: String, text: String)]] {
        var folders: [String: [(String, String)]] = [:]
        let files = FileManager.default.subpaths(atPath: library)?.filter { $0.hasSuffix(".swift") } ?? []
        let noise = try Regex(#"//[^\n]*|"(?:\\.|[^"\\\n])*""#)
        for file in files {
            let text = try String(contentsOfFile: library + "/" + file, encoding: .utf8)
            folders[String(file.split(separator: "/")[0]), default: []].append((file, text.replacing(noise, with: "")))
        }
        return folders
    }

    static func dependencies() throws -> [String: [String: Set<String>]] {
        let folders = try sources()
        let declaration = try Regex(#"(?m)^(?:public |package |final |indirect )*(?:struct|enum|class|actor|protocol|typealias) ([A-Z][A-Za-z0-9_]*)"#)
        var owner: [String: String] = [:]
        for (folder, files) in folders {
            for (_, text) in files {
                for match in text.matches(of: declaration) { owner[String(match.output[1].substring!)] = folder }
            }
        }
        var graph: [String: [String: Set<String>]] = [:]
        for (folder, files) in folders {
            let words = Set(files.flatMap { $0.text.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init) })
            for (type, home) in owner where home != folder && words.contains(type) {
                graph[folder, default: [:]][home, default: []].insert(type)
            }
        }
        return graph
    }

    @Test func noFolderDependsOnOneThatDependsBackOnIt() throws {
        let graph = try Self.dependencies()
        // Every folder reachable from each one; a folder reaching itself is a cycle.
        for start in graph.keys.sorted() {
            var seen: Set<String> = []
            var path: [String: String] = [:]
            var queue = Array(graph[start, default: [:]].keys)
            for next in queue { path[next] = start }
            while let folder = queue.popLast() {
                guard seen.insert(folder).inserted else { continue }
                if folder == start {
                    var chain = [start], at = path[start]!
                    while at != start { chain.append(at); at = path[at]! }
                    Issue.record("folder cycle: \(([start] + chain.dropFirst().reversed()).joined(separator: " → ")) → \(start)")
                    break
                }
                for next in graph[folder, default: [:]].keys where !seen.contains(next) {
                    path[next] = folder
                    queue.append(next)
                }
            }
        }
        #expect(graph["Model"]?.keys.allSatisfy { $0 == "Support" } ?? true, "Model uses only Support: \(graph["Model"] ?? [:])")
        #expect(graph["Scanning"]?.keys.allSatisfy { ["Model", "Support"].contains($0) } ?? true)
    }

    /// `imgbake serve`'s HTTP side is a module of its own (ImgBakeServe): the library core plans pages
    /// for it (Serving/) and never imports SwiftNIO, so a build does not carry a server.
    @Test func theLibraryCoreImportsNoServer() throws {
        for (_, files) in try Self.sources() {
            for (file, text) in files where text.contains("import NIO") {
                Issue.record("\(file) imports SwiftNIO; the proxy belongs in Sources/ImgBakeServe")
            }
        }
    }

    @Test func sqlStaysInTheCachingFolder() throws {
        for (folder, files) in try Self.sources() where folder != "Caching" {
            for (file, text) in files {
                for needle in ["CacheIndex", "BlobStore", "db.query", "import SQLite"] {
                    #expect(!text.contains(needle), "\(file) uses \(needle): go through ImageCache")
                }
            }
        }
    }

    @Test func theBuildReadsAsItsStages() throws {
        let text = try String(contentsOfFile: Self.library + "/Pipeline/BuildRun.swift", encoding: .utf8)
        let start = try #require(text.range(of: "    func build() async throws(BuildError) -> BuildResult {"))
        let end = try #require(text.range(of: "\n    }\n", range: start.upperBound..<text.endIndex))
        let lines = text[start.lowerBound..<end.upperBound].split(separator: "\n").count
        #expect(lines <= 30, "BuildRun.build is \(lines) lines")
        // The stage graph is drawn where the stages are.
        #expect(text.contains("inventory ─▶ triage"))
    }

    /// A page's plan is a pure function of what was gathered for it (`PagePlan.make`): its file reaches
    /// no disk, cache, store or clock, and waits for nothing.
    @Test func thePagePlanTouchesNothing() throws {
        let text = try String(contentsOfFile: Self.library + "/Pipeline/PagePlan.swift", encoding: .utf8)
        for needle in ["AtomicFile", "FileStamp.of", "PageFile.read", "FileManager", "import Foundation", "await ", "now()", "WallClock", "Date("] {
            #expect(!text.contains(needle), "PagePlan.swift uses \(needle)")
        }
        #expect(!text.contains(/\b(cache|store|services|demand)\.[a-zA-Z]/), "PagePlan.swift calls the cache, the store or the demand")
    }

    /// Stages take what the stages before them produced as a few values, not wide state by position:
    /// no function of the pipeline takes more than four parameters; none of the pipeline, the rewriting
    /// or the resolving runs longer than 45 lines.
    @Test func pipelineFunctionsAreNarrowAndShort() throws {
        let signature = try Regex(#"(?m)^[ \t]*(?:(?:public|private|fileprivate|package|static|mutating|nonisolated)\s+)*func\s+(\w+)[^(]*\("#)
        let sources = try Self.sources()
        var checked = 0
        let files = ["Pipeline", "Rewriting", "Resolving"].flatMap { folder in (sources[folder] ?? []).map { (folder, $0.file, $0.text) } }
        for (folder, file, text) in files {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for match in text.matches(of: signature) {
                let name = String(match.output[1].substring!)
                var depth = 1, commas = 0, index = match.range.upperBound, empty = true
                while depth > 0 && index < text.endIndex {
                    let character = text[index]
                    if "([<{".contains(character) { depth += 1 } else if ")]>}".contains(character) { depth -= 1 }
                    else if character == "," && depth == 1 { commas += 1 }
                    if depth > 0 && !character.isWhitespace { empty = false }
                    index = text.index(after: index)
                }
                let parameters = empty ? 0 : commas + 1
                #expect(folder != "Pipeline" || parameters <= 4, "\(file): \(name) takes \(parameters) parameters")
                checked += 1
                // From its line to the line of the brace that closes its body.
                let first = text[..<match.range.lowerBound].filter { $0 == "\n" }.count
                var braces = 0, opened = false, last = first
                for number in first..<lines.count {
                    braces += lines[number].filter { $0 == "{" }.count - lines[number].filter { $0 == "}" }.count
                    opened = opened || lines[number].contains("{")
                    if opened && braces <= 0 { last = number; break }
                }
                #expect(last - first + 1 <= 45, "\(file): \(name) is \(last - first + 1) lines")
            }
        }
        #expect(checked > 250, "\(checked) functions: the scan found too few to mean anything")
    }
}
