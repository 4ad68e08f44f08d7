import Foundation
import Glibc
import Vips
@testable import ImgBake

/// Where things are in the repository, found from this file's path so tests run from any folder.
package enum Paths {
    package static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() } // Paths.swift, TestSupport, Tests
        return url.path
    }()

    package static var images: String { root + "/Examples/images" }
    package static var origin: String { root + "/Tests/Support/origin.py" }
    package static var fixtures: String { root + "/Tests/Fixtures" }

    package static func fixture(_ path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: fixtures + "/" + path)!)
    }
    /// The `imgbake` executable of the build these tests belong to: beside the test bundle, whatever
    /// the configuration or scratch path (`swift build --scratch-path`, sanitizer builds).
    package static let binary: String = {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        return bundle.appendingPathComponent("imgbake").path
    }()

    /// The raster images in Examples/images (the SVG aside).
    /// The stack's libvips, as `make stack` left it (packaging/stack/stack.sh).
    package static var stackLibrary: String { root + "/.build/stack/lib/" + ImageStack.library }
    package static let exampleImages = ["hubble.jpg", "hubble-wide.jpg", "astronaut.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]

    package static func image(_ name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: images + "/" + name)!)
    }
}

/// A fresh folder under the system's temporary folder, removed when the value goes away.
package final class TemporaryFolder: @unchecked Sendable {
    package let path: String

    package init() {
        path = NSTemporaryDirectory() + "imgbake-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    package func write(_ relative: String, _ text: String) { write(relative, Array(text.utf8)) }

    /// Writes `text` at an absolute path, making its folder.
    package static func write(_ text: String, to path: String) {
        try! FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }

    package func write(_ relative: String, _ bytes: [UInt8]) {
        let full = path + "/" + relative
        try! FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: full, contents: Data(bytes))
    }

    package func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + relative).map { [UInt8]($0) }
    }

    package func text(_ relative: String) -> String? { read(relative).map { String(decoding: $0, as: UTF8.self) } }

    package func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + relative) }

    /// Every file below `relative`, as relative paths, sorted.
    package func files(under relative: String = "") -> [String] {
        let base = relative.isEmpty ? path : path + "/" + relative
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var files: [String] = []
        while let next = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: base + "/" + next, isDirectory: &isDirectory)
            if !isDirectory.boolValue { files.append(next) }
        }
        return files.sorted()
    }

    /// The same, for any folder.
    package static func digests(of folder: String) -> [String: String] {
        var digests: [String: String] = [:]
        for path in FileManager.default.subpaths(atPath: folder) ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: folder + "/" + path) else { continue }
            digests[path] = "\(data.count) bytes, \(BlobID(of: [UInt8](data)).hex.prefix(12))"
        }
        return digests
    }

    /// Every file's content digest, by relative path: for comparing whole trees with readable failures.
    package func digests(under relative: String = "") -> [String: String] {
        snapshot(under: relative).mapValues { "\($0.count) bytes, \(BlobID(of: $0).hex.prefix(12))" }
    }

    /// Every file's bytes, by relative path: for comparing whole trees (a file that vanishes while
    /// the tree is read, such as SQLite's journal, is left out).
    package func snapshot(under relative: String = "") -> [String: [UInt8]] {
        let base = relative.isEmpty ? "" : relative + "/"
        return Dictionary(uniqueKeysWithValues: files(under: relative).compactMap { path in read(base + path).map { (path, $0) } })
    }
}

/// Reads a pipe to its end with read(2), retrying when a signal interrupts it. Foundation's
/// `readDataToEndOfFile()` traps on EINTR, and tests have child processes (SIGCHLD) all the time.
package func readAll(_ fd: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count > 0 { data.append(contentsOf: buffer[0..<count]); continue }
        if count < 0 && errno == EINTR { continue }
        return data
    }
}
