import Foundation
import Glibc
@testable import ImgBake

/// Where things are in the repository, found from this file's path so tests run from any folder.
enum Paths {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() } // Support, ImgBakeTests, Tests, root
        return url.path
    }()

    static var images: String { root + "/Examples/images" }
    static var origin: String { root + "/Tests/Support/origin.py" }
    static var fixtures: String { root + "/Tests/ImgBakeTests/Fixtures" }

    static func fixture(_ path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: fixtures + "/" + path)!)
    }
    /// The `imgbake` built together with these tests: it sits next to the test bundle, whichever the
    /// scratch path (`.build`, `.build-asan`, ...) and configuration.
    static let binary: String = {
        let bundle = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return bundle.deletingLastPathComponent().appendingPathComponent("imgbake").path
    }()

    /// The raster images in Examples/images (the SVG aside).
    static let exampleImages = ["hubble.jpg", "hubble-wide.jpg", "astronaut.jpg", "coffee.png", "astronaut-round.png", "deep-field.gif"]

    static func image(_ name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: images + "/" + name)!)
    }
}

/// A fresh folder under the system's temporary folder, removed when the value goes away.
final class TemporaryFolder: @unchecked Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "imgbake-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ relative: String, _ text: String) { write(relative, Array(text.utf8)) }

    func write(_ relative: String, _ bytes: [UInt8]) {
        let full = path + "/" + relative
        try! FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: full, contents: Data(bytes))
    }

    func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + relative).map { [UInt8]($0) }
    }

    func text(_ relative: String) -> String? { read(relative).map { String(decoding: $0, as: UTF8.self) } }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + relative) }

    /// Every file below `relative`, as relative paths, sorted.
    func files(under relative: String = "") -> [String] {
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

    /// Every file's content digest, by relative path: for comparing whole trees with readable failures.
    func digests(under relative: String = "") -> [String: String] {
        snapshot(under: relative).mapValues { "\($0.count) bytes, \(BlobID(of: $0).hex.prefix(12))" }
    }

    /// Every file's bytes, by relative path: for comparing whole trees (a file that vanishes while
    /// the tree is read, such as SQLite's journal, is left out).
    func snapshot(under relative: String = "") -> [String: [UInt8]] {
        let base = relative.isEmpty ? "" : relative + "/"
        return Dictionary(uniqueKeysWithValues: files(under: relative).compactMap { path in read(base + path).map { (path, $0) } })
    }
}

/// Reads a pipe to its end with read(2), retrying when a signal interrupts it. Foundation's
/// `readDataToEndOfFile()` traps on EINTR, and tests have child processes (SIGCHLD) all the time.
func readAll(_ handle: FileHandle) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count > 0 { data.append(contentsOf: buffer[0..<count]); continue }
        if count < 0 && errno == EINTR { continue }
        return data
    }
}
