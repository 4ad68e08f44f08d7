import Curl
import Digest
import Foundation
import Locking

/// `imgbake cache gc --remote`: bounds a remote cache by age and by size, for stores that cannot do it
/// themselves (a WebDAV folder) or where a user wants one command for both.
///
/// Age is the time since an object was last written (the store's `Last-Modified`): reading does not
/// make an object younger (S3 cannot record reads without a write, and a store that did would cost a
/// request per hit). Builds that may write give an image's pack a new write time when they use it and
/// it is older than `RemoteCache.refreshAge` (7 days), so a `--max-age` above that plus the time
/// between builds keeps what builds use; an original's bytes are not refreshed (they are only needed
/// to make variants a pack lacks, and a build missing them downloads them from the origin and puts
/// them back). `--max-size` removes the objects written longest ago until the rest fits.
///
/// Only imgbake's objects are looked at (`v2/`, and layout 1's `cas/` and `ac/`, which no build
/// writes any more and so age out); `layout.json` is never removed. Removing an object a build is
/// using at the same moment costs that build a miss, never a wrong image: everything is verified.
public enum RemoteRetention {
    public struct Object: Sendable, Equatable {
        /// Under the remote's root, e.g. `v2/packs/<sha256>`.
        public var path: String
        public var bytes: Int
        /// Unix seconds of its last write, as the store says.
        public var modified: Double
    }

    public struct Report: Sendable {
        public var listed: [Object] = []
        public var removedForAge: [Object] = []
        public var removedForSize: [Object] = []
        /// Objects that could not be removed (already gone ones are not counted).
        public var failed = 0
        public var requests = 0

        public var removed: [Object] { removedForAge + removedForSize }
        public var remaining: Int { listed.count - removed.count + failed }
        public var remainingBytes: Int { listed.map(\.bytes).reduce(0, +) - removed.map(\.bytes).reduce(0, +) }
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Lists the remote's objects, chooses what goes (older than `maxAge`, then the oldest until the rest
    /// is at most `maxBytes`) and, unless `dryRun`, removes it.
    public static func collect(_ settings: RemoteSettings, maxAge: Duration?, maxBytes: Int?, dryRun: Bool, now: Double,
                               environment: [String: String] = ProcessInfo.processInfo.environment) async throws(Failure) -> Report {
        let store = RemoteStore(settings: settings, credentials: RemoteCredentials(for: settings.location, environment: environment),
                                environment: environment, maxBlobBytes: 0)
        defer { Task { await store.shutdown() } }
        var report = Report()
        let lister = Lister(store: store)
        report.listed = try await lister.list()
        report.requests = lister.requests.withLock { $0 }
        var kept = report.listed.sorted { ($0.modified, $0.path) < ($1.modified, $1.path) }
        if let maxAge {
            let limit = now - maxAge.seconds
            report.removedForAge = kept.filter { $0.modified < limit }
            kept.removeAll { $0.modified < limit }
        }
        if let maxBytes {
            var total = kept.map(\.bytes).reduce(0, +)
            while total > maxBytes, !kept.isEmpty {
                let oldest = kept.removeFirst()
                total -= oldest.bytes
                report.removedForSize.append(oldest)
            }
        }
        if !dryRun {
            report.failed = try await lister.remove(report.removed.map(\.path))
            report.requests = lister.requests.withLock { $0 }
        }
        return report
    }

    /// Listing and removal in each store's terms: S3's ListObjectsV2 and DeleteObjects (1,000 keys a
    /// request), WebDAV's PROPFIND (Depth 1, folder by folder) and DELETE.
    final class Lister: Sendable {
        let store: RemoteStore
        let requests = Locked(0)

        init(store: RemoteStore) { self.store = store }

        func list() async throws(Failure) -> [Object] {
            var objects: [Object] = []
            for prefix in RemotePath.collected {
                switch store.settings.location {
                case .s3(_, let root): objects += try await listS3(root.isEmpty ? prefix : root + "/" + prefix, root: root)
                case .http(let base): objects += try await listDAV(base + "/" + prefix, base: base)
                }
            }
            return objects
        }

        private func send(_ method: TransferRequest.Method, url: String, body: [UInt8] = [], headers: [String] = []) async throws(Failure)
            -> [UInt8]? {
            let (answer, _, retries) = await store.send(method, url: url, body: body, headers: headers)
            requests.withLock { $0 += 1 + retries }
            switch answer {
            case .found(let bytes): return bytes
            case .stored: return []
            case .absent: return nil
            case .refused(let status): throw Failure(description: "\(method.rawValue) refused (HTTP \(status)); check the credentials and what they may do")
            case .failed(let why, _) where why == "HTTP 405" || why == "HTTP 501":
                throw Failure(description: "the server does not allow \(method.rawValue) (\(why))"
                              + (method == .propfind ? ": nginx needs libnginx-mod-http-dav-ext and `dav_ext_methods PROPFIND;`" : ""))
            case .full(let status): throw Failure(description: "\(method.rawValue) failed (HTTP \(status))")
            case .failed(let why, _): throw Failure(description: "\(method.rawValue) failed (\(why))")
            }
        }

        // MARK: S3

        private func listS3(_ prefix: String, root: String) async throws(Failure) -> [Object] {
            var objects: [Object] = []
            var after: String?
            repeat {
                // libcurl before 8.3 signs the query as it is written: it must already be Signature V4's
                // canonical form (parameters sorted, values percent-encoded, '/' too). Pages follow on from
                // the last key (start-after), which is one of imgbake's own, rather than an opaque token.
                var query = "list-type=2&prefix=" + Self.encode(prefix)
                if let after { query += "&start-after=" + Self.encode(after) }
                guard let body = try await send(.get, url: store.bucketURL + "?" + query) else {
                    throw Failure(description: "the bucket was not found")
                }
                let xml = String(decoding: body, as: UTF8.self)[...]
                var last: String?
                for item in XMLText.elements("Contents", in: xml) {
                    guard let key = XMLText.elements("Key", in: item).first.map(XMLText.unescape) else { continue }
                    last = key
                    guard let size = XMLText.elements("Size", in: item).first.flatMap({ Int($0) }),
                          let modified = XMLText.elements("LastModified", in: item).first.flatMap({ StoreDate.iso8601(String($0)) }) else {
                        continue
                    }
                    objects.append(Object(path: root.isEmpty ? key : String(key.dropFirst(root.count + 1)), bytes: size, modified: modified))
                }
                after = XMLText.elements("IsTruncated", in: xml).first == "true" ? last : nil
            } while after != nil
            return objects
        }

        /// RFC 3986's unreserved characters stay; everything else is percent-encoded, '/' included.
        static func encode(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    out.append(Character(Unicode.Scalar(byte)))
                default:
                    out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
                }
            }
            return out
        }

        // MARK: WebDAV

        static let propfind = Array("""
            <?xml version="1.0" encoding="utf-8"?>
            <propfind xmlns="DAV:"><prop><getcontentlength/><getlastmodified/><resourcetype/></prop></propfind>
            """.utf8)

        private func listDAV(_ folder: String, base: String) async throws(Failure) -> [Object] {
            let basePath = RemoteURL.resolve(base + "/")?.path ?? "/"
            var objects: [Object] = []
            var folders = [folder]
            while let next = folders.popLast() {
                guard let body = try await send(.propfind, url: next, body: Self.propfind,
                                                headers: ["Depth: 1", "Content-Type: application/xml"]) else { continue }
                let xml = String(decoding: body, as: UTF8.self)[...]
                let here = RemoteURL.resolve(next)?.path ?? next
                for response in XMLText.elements("response", in: xml) {
                    guard let href = XMLText.elements("href", in: response).first.map(XMLText.unescape) else { continue }
                    let path = RemoteURL.resolve(href, against: RemoteURL.resolve(next))?.path ?? href
                    guard path != here, path.hasPrefix(basePath) else { continue }
                    let relative = String(path.dropFirst(basePath.count)).removingPercentEncoding ?? String(path.dropFirst(basePath.count))
                    if XMLText.elements("resourcetype", in: response).first?.contains("collection") == true {
                        folders.append(base + "/" + relative + (relative.hasSuffix("/") ? "" : "/"))
                        continue
                    }
                    guard let size = XMLText.elements("getcontentlength", in: response).first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }),
                          let modified = XMLText.elements("getlastmodified", in: response).first.flatMap({ StoreDate.rfc1123(String($0)) }) else {
                        continue
                    }
                    objects.append(Object(path: relative, bytes: size, modified: modified))
                }
            }
            return objects
        }

        // MARK: Removal

        /// Removes `paths`; returns how many could not be removed.
        func remove(_ paths: [String]) async throws(Failure) -> Int {
            guard !paths.isEmpty else { return 0 }
            switch store.settings.location {
            case .s3(_, let root):
                var failed = 0
                for start in stride(from: 0, to: paths.count, by: 1000) {
                    let keys = paths[start..<min(start + 1000, paths.count)].map { root.isEmpty ? $0 : root + "/" + $0 }
                    let body = Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
                        + keys.map { "<Object><Key>\(XMLText.escape($0))</Key></Object>" }.joined() + "</Delete>").utf8)
                    let md5 = Data(MD5.hash(body)).base64EncodedString()
                    let answer = try await send(.post, url: store.bucketURL + "?delete=", body: body,
                                                headers: ["Content-MD5: \(md5)", "Content-Type: application/xml"])
                    failed += XMLText.elements("Error", in: String(decoding: answer ?? [], as: UTF8.self)[...]).count
                }
                return failed
            case .http(let base):
                // Eight at a time; a 404 is an object already gone, which is what was wanted.
                var pending = paths[...]
                while !pending.isEmpty {
                    let batch = pending.prefix(8)
                    pending = pending.dropFirst(8)
                    let outcomes = await withTaskGroup(of: Failure?.self) { group in
                        for path in batch {
                            group.addTask {
                                do throws(Failure) { _ = try await self.send(.delete, url: base + "/" + path); return nil } catch { return error }
                            }
                        }
                        return await group.reduce(into: [Failure]()) { if let failure = $1 { $0.append(failure) } }
                    }
                    if let first = outcomes.first { throw first }
                }
                return 0
            }
        }
    }
}

/// Just enough XML for S3's and WebDAV's listings: the contents of elements by local name (any
/// namespace prefix), and the five predefined entities.
private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

enum XMLText {
    static func elements(_ name: String, in xml: Substring) -> [Substring] {
        var found: [Substring] = []
        var rest = xml[...]
        while let open = rest.range(of: "<") {
            var cursor = open.upperBound
            let tagEnd = rest[cursor...].firstIndex(where: { $0 == ">" || $0 == " " || $0 == "/" || $0 == "\n" || $0 == "\t" }) ?? rest.endIndex
            let tag = rest[cursor..<tagEnd]
            let local = tag.split(separator: ":").last.map(String.init) ?? ""
            guard local == name, !tag.hasPrefix("/"), let close = rest[tagEnd...].firstIndex(of: ">") else {
                rest = rest[cursor...]
                continue
            }
            cursor = rest.index(after: close)
            if rest[rest.index(before: close)] == "/" { found.append(rest[cursor..<cursor]); rest = rest[cursor...]; continue }
            guard let end = rest[cursor...].range(of: "</" + tag + ">") else { break }
            found.append(rest[cursor..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return found
    }

    static func unescape(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// The two date forms stores send, as Unix seconds: S3's ISO 8601 and WebDAV's HTTP dates (RFC 1123).
enum StoreDate {
    static func iso8601(_ text: String) -> Double? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (withFraction.date(from: text) ?? ISO8601DateFormatter().date(from: text))?.timeIntervalSince1970
    }

    static func rfc1123(_ text: String) -> Double? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespacesAndNewlines))?.timeIntervalSince1970
    }
}
