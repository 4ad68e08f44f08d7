import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// toml-test's TOML 1.0 documents (vendored in Tests/Conformance/toml-test, listed in its
/// `files-toml-1.0.0`): every valid one parses to the values of its tagged JSON, every invalid one is
/// rejected with a line inside the document. A failure names the suite's file, the expected and the
/// actual value.
@Suite struct TOMLConformanceTests {
    static let suite = Paths.root + "/Tests/Conformance/toml-test/tests"

    /// Documents imgbake deliberately reads differently from TOML 1.0, by file, with the reason.
    /// None today: imgbake reads TOML 1.0 as the suite does (1.1 additions are rejected, as 1.0 says).
    static let deliberateDifferences: [String: String] = [:]

    static func documents(_ kind: String) -> [String] {
        let list = (try? String(contentsOfFile: suite + "/files-toml-1.0.0", encoding: .utf8)) ?? ""
        return list.split(separator: "\n").map(String.init).filter { $0.hasPrefix(kind + "/") && $0.hasSuffix(".toml") }
    }

    static func bytes(_ file: String) -> [UInt8] {
        FileManager.default.contents(atPath: suite + "/" + file).map { [UInt8]($0) } ?? []
    }

    static func parse(_ file: String) throws(TOMLError) -> [String: TOMLNode] {
        try TOMLParser.parse(bytes(file))
    }

    @Test func everyValidDocumentParsesToTheValuesOfItsJSON() throws {
        let documents = Self.documents("valid")
        #expect(documents.count == 210)
        var passed: [String] = []
        for file in documents {
            let json = try JSONSerialization.jsonObject(with: Data(Self.bytes(String(file.dropLast(5)) + ".json")))
            let expected = Tagged(json: json)
            do {
                let actual = Tagged(.table(try Self.parse(file)))
                if let difference = expected.difference(from: actual) {
                    Self.record(file, "\(difference)")
                } else {
                    passed.append(file)
                }
            } catch {
                Self.record(file, "rejected at line \(error.line): \(error.message)")
            }
        }
        Self.check(passed: passed, of: documents)
    }

    @Test func everyInvalidDocumentIsRejectedWithALineInsideIt() {
        let documents = Self.documents("invalid")
        #expect(documents.count == 499)
        var passed: [String] = []
        for file in documents {
            let lines = Self.bytes(file).count { $0 == 0x0A } + 1
            do {
                let root = try Self.parse(file)
                Self.record(file, "accepted, read as \(Tagged(.table(root)))")
            } catch {
                if (1...lines).contains(error.line) {
                    passed.append(file)
                } else {
                    Self.record(file, "rejected at line \(error.line), outside the document's 1...\(lines): \(error.message)")
                }
            }
        }
        Self.check(passed: passed, of: documents)
    }

    static func record(_ file: String, _ problem: String) {
        guard deliberateDifferences[file] == nil else { return }
        Issue.record("\(file): \(problem)")
    }

    /// Every document passes but the deliberate differences, and those still differ (else drop them from the list).
    static func check(passed: [String], of documents: [String]) {
        let exceptions = Set(documents).intersection(deliberateDifferences.keys)
        for file in passed where exceptions.contains(file) {
            Issue.record("\(file) passes now: remove it from deliberateDifferences")
        }
        #expect(passed.count == documents.count - exceptions.count, "\(passed.count) of \(documents.count) pass")
    }
}

/// toml-test's tagged JSON (`{"type": "integer", "value": "1"}` leaves inside plain arrays and objects),
/// and a parsed TOML tree in the same form, canonical so that equal values compare equal: strings as
/// Unicode scalars (not Swift's canonical equivalence), numbers by value, date-times by their fields.
indirect enum Tagged: Equatable, CustomStringConvertible {
    case leaf(type: String, value: String)
    case array([Tagged])
    case table([String: Tagged])

    init(json: Any) {
        switch json {
        case let object as [String: Any]:
            if let type = object["type"] as? String, let value = object["value"] as? String, object.count == 2 {
                self = .leaf(type: type, value: Self.canonical(type: type, value))
            } else {
                self = .table(Dictionary(uniqueKeysWithValues: object.map { (Self.scalars($0.key), Tagged(json: $0.value)) }))
            }
        case let array as [Any]: self = .array(array.map(Tagged.init(json:)))
        default: self = .leaf(type: "not tagged JSON", value: "\(json)")
        }
    }

    init(_ value: TOMLValue) {
        switch value {
        case .string(let text): self = .leaf(type: "string", value: Self.scalars(text))
        case .integer(let number): self = .leaf(type: "integer", value: String(number))
        case .float(let number): self = .leaf(type: "float", value: Self.float(number))
        case .bool(let flag): self = .leaf(type: "bool", value: String(flag))
        case .dateTime(let value):
            let date = value.date.map { String(format: "%04d-%02d-%02d", $0.year, $0.month, $0.day) }
            let time = value.time.map { String(format: "%02d:%02d:%02d", $0.hour, $0.minute, $0.second) }
            let offset = value.offset.map { $0 == 0 ? "Z" : String(format: "%@%02d:%02d", $0 < 0 ? "-" : "+", abs($0) / 60, abs($0) % 60) }
            let type = value.offset != nil ? "datetime" : date == nil ? "time-local" : time == nil ? "date-local" : "datetime-local"
            self = .leaf(type: type, value: Self.dateTime(date: date, time: time, nanoseconds: value.time?.nanosecond ?? 0, offset: offset))
        case .array(let items): self = .array(items.map { Tagged($0.value) })
        case .table(let table): self = .table(Dictionary(uniqueKeysWithValues: table.map { (Self.scalars($0.key), Tagged($0.value.value)) }))
        }
    }

    var description: String {
        switch self {
        case .leaf(let type, let value): "\(type) \(value)"
        case .array(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .table(let table): "{" + table.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", ") + "}"
        }
    }

    /// Where `actual` first differs from this (expected) value, with both sides; nil if equal.
    func difference(from actual: Tagged, at path: String = "") -> String? {
        let here = path.isEmpty ? "the document" : path
        switch (self, actual) {
        case (.table(let expected), .table(let found)):
            for key in Set(expected.keys).union(found.keys).sorted() {
                let child = path.isEmpty ? key : path + "." + key
                guard let e = expected[key] else { return "\(child): expected no such key, found \(found[key]!)" }
                guard let f = found[key] else { return "\(child): expected \(e), found no such key" }
                if let difference = e.difference(from: f, at: child) { return difference }
            }
            return nil
        case (.array(let expected), .array(let found)) where expected.count == found.count:
            for (index, (e, f)) in zip(expected, found).enumerated() {
                if let difference = e.difference(from: f, at: "\(path)[\(index)]") { return difference }
            }
            return nil
        default:
            return self == actual ? nil : "\(here): expected \(self), found \(actual)"
        }
    }

    /// A string as printable ASCII with every other scalar as \u{...}, so the comparison is scalar by scalar.
    static func scalars(_ text: String) -> String {
        text.unicodeScalars.map { (0x20..<0x7F).contains($0.value) && $0 != "\\" ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
    }

    static func float(_ number: Double) -> String {
        number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-inf" : "+inf") : "\(number)"
    }

    static func canonical(type: String, _ value: String) -> String {
        switch type {
        case "string": return scalars(value)
        case "integer": return Int(value).map(String.init) ?? "unreadable \(value)"
        case "float":
            switch value {
            case "nan", "+nan", "-nan": return "nan"
            case "inf", "+inf": return "+inf"
            case "-inf": return "-inf"
            default: return Double(value).map(float) ?? "unreadable \(value)"
            }
        case "datetime", "datetime-local", "date-local", "time-local": return dateTime(value) ?? "unreadable \(value)"
        default: return value
        }
    }

    /// RFC 3339 text with the fraction to nanoseconds without trailing zeros, `Z` for a zero offset.
    static func dateTime(_ text: String) -> String? {
        guard let match = text.wholeMatch(of: /(?i)(\d{4}-\d{2}-\d{2})?[T ]?(?:(\d{2}:\d{2}:\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?/) else { return nil }
        return dateTime(date: match.1.map(String.init), time: match.2.map(String.init),
                        nanoseconds: match.3.map { Int(String(($0 + "00000000").prefix(9)))! } ?? 0,
                        offset: match.4.map { ["Z", "z", "+00:00", "-00:00"].contains($0) ? "Z" : String($0) })
    }

    static func dateTime(date: String?, time: String?, nanoseconds: Int, offset: String?) -> String {
        var fraction = nanoseconds == 0 ? "" : "." + String(format: "%09d", nanoseconds)
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return [date, time.map { $0 + fraction }].compactMap { $0 }.joined(separator: "T") + (offset ?? "")
    }
}
