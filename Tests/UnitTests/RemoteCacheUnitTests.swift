import Curl
import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The remote cache's parts that need no server: shards, locations and keys in `imgbake.toml`, how
/// requests are addressed, signed and authorised, and what a record must be to be used.
@Suite struct RemoteCacheUnitTests {
    // MARK: Shards

    @Test func shardsAreBalancedDisjointAndStable() {
        let keys = (0..<10_000).map { OriginalKey("https://images.example.com/photos/\($0).jpg") }
        var sizes = [Int](repeating: 0, count: 4)
        for key in keys {
            let owners = (1...4).filter { Shard(index: $0, count: 4)!.includes(key) }
            #expect(owners.count == 1)
            sizes[owners[0] - 1] += 1
        }
        #expect(sizes.allSatisfy { abs($0 - 2500) < 150 }, "\(sizes)")
        // The same key falls in the same shard on every machine and in every version: 1 + (the first
        // 8 bytes of its SHA-256, big-endian) mod N, here computed independently with Python's hashlib.
        #expect(Shard.of(OriginalKey("https://images.example.com/photos/1.jpg"), count: 1000) == 966)
        #expect(Shard(index: 1, count: 1)!.includes(OriginalKey("anything")))
    }

    @Test func shardTextIsKOverNWithKFromOne() {
        #expect(Shard(parsing: "2/4") == Shard(index: 2, count: 4))
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "1/2/3", "-1/2", ""] { #expect(Shard(parsing: bad) == nil, "\(bad)") }
    }

    // MARK: Locations and configuration

    @Test func remoteLocationsParse() throws {
        #expect(try RemoteLocation.parse("s3://my-bucket/site/images/").get() == .s3(bucket: "my-bucket", prefix: "site/images"))
        #expect(try RemoteLocation.parse("s3://my-bucket").get() == .s3(bucket: "my-bucket", prefix: ""))
        #expect(try RemoteLocation.parse("https://Cache.Example.com:8443/imgbake/").get() == .http(base: "https://cache.example.com:8443/imgbake"))
        for (bad, why) in [("ftp://x/y", "expected s3://"), ("s3://B/x", "not an S3 bucket name"),
                           ("https://user:secret@cache.example.com/x", "IMGBAKE_REMOTE_TOKEN"), ("https://c.example.com/x?y=1", "no query"),
                           ("s3://bucket/a b", "key prefix")] {
            guard case .failure(let error) = RemoteLocation.parse(bad) else { Issue.record("\(bad) parsed"); continue }
            #expect(error.description.contains(why), "\(bad): \(error)")
            #expect(!error.description.contains("secret"))
        }
    }

    func load(_ text: String) throws(ConfigurationError) -> Configuration {
        let folder = TemporaryFolder()
        folder.write("imgbake.toml", text)
        var config = Configuration(site: folder.path, cacheDirectory: "/default-cache")
        try ConfigurationFile.load(folder.path + "/imgbake.toml", into: &config)
        return config
    }

    @Test func remoteKeysRefineTheRemoteWhereverTheyAreWritten() throws {
        let config = try load("""
        [cache]
        remote_region = "eu-west-1"
        remote = "s3://imgbake-cache/site"
        remote_endpoint = "http://127.0.0.1:9000/"
        remote_path_style = true
        remote_write = false
        remote_timeout = "20s"
        """)
        var expected = RemoteSettings(location: .s3(bucket: "imgbake-cache", prefix: "site"))
        expected.region = "eu-west-1"
        expected.endpoint = "http://127.0.0.1:9000"
        expected.pathStyle = true
        expected.write = false
        expected.timeout = .seconds(20)
        #expect(config.cache.remote == expected)
    }

    @Test(arguments: [
        ("[cache]\nremote_write = false\n", 2, "cache.remote_write: needs cache.remote"),
        ("[cache]\nremote = \"https://c.example.com/x\"\nremote_region = \"us-east-1\"\n", 3, "cache.remote_region: only for an s3:// remote"),
        ("[cache]\n\nremote = \"gopher://x\"\n", 3, "cache.remote: expected s3://bucket/prefix"),
        ("[cache]\nremote = \"s3://bucket\"\nremote_endpoint = \"127.0.0.1:9000\"\n", 3, "cache.remote_endpoint: expected http(s)://host[:port]"),
        ("[cache]\nremote = \"s3://bucket\"\nremote_timeout = \"0s\"\n", 3, "cache.remote_timeout: must be at least 1s"),
        ("[cache]\nremote = \"s3://bucket\"\nremote_pathstyle = true\n", 3, "cache.remote_pathstyle: unknown key (did you mean remote_path_style?)"),
    ])
    func badRemoteKeysNameTheLineAndKey(text: String, line: Int, message: String) {
        #expect(throws: ConfigurationError.self) { try load(text) }
        do { _ = try load(text) } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }

    // MARK: Requests

    func store(_ location: RemoteLocation, endpoint: String? = nil, pathStyle: Bool = false,
               environment: [String: String]) -> RemoteStore {
        var settings = RemoteSettings(location: location)
        settings.endpoint = endpoint
        settings.pathStyle = pathStyle
        return RemoteStore(settings: settings, credentials: RemoteCredentials(for: location, environment: environment),
                           environment: environment, maxBlobBytes: 1 << 20)
    }

    @Test func s3ObjectsAreAddressedPathStyleOrVirtualHosted() {
        let s3 = RemoteLocation.s3(bucket: "bkt", prefix: "p/q")
        #expect(store(s3, environment: ["AWS_REGION": "eu-central-1"]).url(of: "cas/ab") == "https://bkt.s3.eu-central-1.amazonaws.com/p/q/cas/ab")
        #expect(store(s3, endpoint: "http://127.0.0.1:9000", pathStyle: true, environment: [:]).url(of: "cas/ab") == "http://127.0.0.1:9000/bkt/p/q/cas/ab")
        #expect(store(.s3(bucket: "bkt", prefix: ""), endpoint: "https://r2.example.com", environment: [:]).url(of: "ac/v1/x") == "https://bkt.r2.example.com/ac/v1/x")
        #expect(store(.http(base: "https://c.example.com/imgbake"), environment: [:]).url(of: "cas/ab") == "https://c.example.com/imgbake/cas/ab")
    }

    @Test func s3RequestsAreSignedWithThePayloadHashAndTheSessionToken() {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "AWS_SESSION_TOKEN": "FQoGZX", "AWS_DEFAULT_REGION": "ap-south-1"]
        let put = store(.s3(bucket: "bkt", prefix: ""), environment: environment).request(.put, "cas/x", body: Array("hello".utf8), limit: 10)
        #expect(put.awsSigV4 == "aws:amz:ap-south-1:s3" && put.credentials == "AKIDEXAMPLE:wJalrXUtnFEMI" && put.method == .put)
        #expect(put.headers.contains("x-amz-content-sha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"))
        #expect(put.headers.contains("x-amz-security-token: FQoGZX"))
        let get = store(.s3(bucket: "bkt", prefix: ""), environment: environment).request(.get, "cas/x", body: [], limit: 10)
        #expect(get.headers.contains("x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(get.maxRedirects == 0, "a remote cache is not followed elsewhere")
        let anonymous = store(.s3(bucket: "bkt", prefix: ""), environment: [:]).request(.get, "cas/x", body: [], limit: 10)
        #expect(anonymous.awsSigV4 == nil && anonymous.credentials == nil)
    }

    @Test func httpRequestsCarryTheTokenAsBearerOrBasic() {
        let http = RemoteLocation.http(base: "https://c.example.com")
        #expect(store(http, environment: ["IMGBAKE_REMOTE_TOKEN": "s3cr3t"]).request(.head, "cas/x", body: [], limit: 0)
            .headers == ["Authorization: Bearer s3cr3t"])
        let basic = store(http, environment: ["IMGBAKE_REMOTE_TOKEN": "ci:pa55"]).request(.head, "cas/x", body: [], limit: 0)
        #expect(basic.credentials == "ci:pa55" && basic.headers.isEmpty && basic.awsSigV4 == nil)
        #expect(store(http, environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"]).request(.get, "x", body: [], limit: 0).credentials == nil,
                "AWS keys are for S3 remotes only")
    }

    @Test func credentialsDescribeTheirKindNeverTheirValue() {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "IMGBAKE_REMOTE_TOKEN": "tk-91xq"]
        for location in [RemoteLocation.s3(bucket: "bkt", prefix: ""), .http(base: "https://c.example.com")] {
            let text = "\(RemoteCredentials(for: location, environment: environment))"
            for secret in environment.values { #expect(!text.contains(secret), "\(text)") }
        }
    }

    // MARK: Records

    static let original = OriginalRecord(key: OriginalKey("https://images.example.com/a.jpg"), url: "https://images.example.com/a.jpg",
                                         blob: BlobID(of: [1, 2, 3]), format: .jpeg, width: 640, height: 480, pages: 1, bytes: 3,
                                         validators: Validators(etag: "\"e\"", cacheControl: "max-age=60"), fetchedAt: 1_700_000_000)

    /// A pack of `original`: a WebP and a JPEG variant, a dropped AVIF, a placeholder.
    static func pack(tamper: (inout [UInt8]) -> Void = { _ in }) -> (bytes: [UInt8], rows: [VariantRecord], blobs: [BlobID: [UInt8]]) {
        let blob = original.blob
        func row(_ spec: String, _ format: ImageFormat, _ bytes: [UInt8]?) -> VariantRecord {
            VariantRecord(key: VariantSpec.key(original: blob, canonical: spec), originalBlob: blob, spec: spec,
                          blob: bytes.map { BlobID(of: $0) }, format: format, width: 64, height: 48, bytes: bytes?.count ?? 900)
        }
        let webp = Array("webp bytes".utf8), jpeg = Array("jpeg bytes, a few more".utf8)
        let rows = [row("w=64;f=webp;q=80;e=4;anim=0;keep=", .webp, webp), row("w=64;f=jpeg;q=80;e=0;anim=0;keep=", .jpeg, jpeg),
                    row("w=64;f=avif;q=50;e=1;anim=0;keep=", .avif, nil)]
        var bytes = Pack.encode(key: .original(original.key), originalBlob: blob, original: (original, Credits(copyright: "© A")),
                                variants: rows, placeholders: ["color": "#336699"],
                                blobs: [(BlobID(of: webp), webp), (BlobID(of: jpeg), jpeg)], written: 1_800_000_000)
        tamper(&bytes)
        return (bytes, rows, [BlobID(of: webp): webp, BlobID(of: jpeg): jpeg])
    }

    @Test func aPackRoundTripsAndIsCheckedAgainstTheKeyAskedFor() throws {
        let (bytes, rows, blobs) = Self.pack()
        let pack = try Pack.decode(bytes, expected: .original(Self.original.key), maxOriginalBytes: 100).get()
        #expect(pack.original?.record == Self.original && pack.original?.credits == Credits(copyright: "© A"))
        #expect(pack.variants == Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) }))
        #expect(pack.blobs == blobs && pack.placeholders == ["color": "#336699"] && pack.written == 1_800_000_000)
        #expect(pack.badBlobs.isEmpty && pack.foreign == 0)
        #expect(String(decoding: bytes.prefix(15), as: UTF8.self) == "imgbake-pack 2 ")

        #expect(throws: RemoteRecordError.self) { try Pack.decode(bytes, expected: .original(OriginalKey("https://images.example.com/b.jpg")), maxOriginalBytes: 100).get() }
        #expect(throws: RemoteRecordError.self) { try Pack.decode(bytes, expected: .content(Self.original.blob), maxOriginalBytes: 100).get() }
        #expect(throws: RemoteRecordError.self, "an original larger than fetch.max_bytes") {
            try Pack.decode(bytes, expected: .original(Self.original.key), maxOriginalBytes: 2).get()
        }
        #expect(throws: RemoteRecordError.self) { try Pack.decode(Array(bytes.prefix(40)), expected: .original(Self.original.key), maxOriginalBytes: 100).get() }
        #expect(throws: RemoteRecordError.self) { try Pack.decode(Array("{\"version\":1}".utf8), expected: .original(Self.original.key), maxOriginalBytes: 100).get() }
        let later = Self.pack { bytes in bytes.replaceSubrange(13..<14, with: Array("3".utf8)) }.bytes
        #expect(throws: RemoteRecordError.self, "a later layout's pack") { try Pack.decode(later, expected: .original(Self.original.key), maxOriginalBytes: 100).get() }
    }

    @Test func aPackBlobThatDoesNotMatchItsHashLeavesOnlyItsVariantOut() throws {
        let (bytes, rows, _) = Self.pack { bytes in bytes[bytes.count - 3] ^= 0x5A } // inside the JPEG's bytes, the last blob
        let pack = try Pack.decode(bytes, expected: .original(Self.original.key), maxOriginalBytes: 100).get()
        #expect(pack.badBlobs == [rows[1].blob!])
        #expect(Set(pack.variants.keys) == [rows[0].key, rows[2].key], "the WebP and the dropped AVIF stay")
    }

    @Test func variantsOfAnotherEncoderOrLyingAboutTheirSpecAreLeftOut() throws {
        let spec = "w=64;f=webp;q=80;e=4;anim=0;keep="
        let other = VariantRecord(key: VariantKey(hex: String(repeating: "c", count: 64)), originalBlob: Self.original.blob, spec: spec,
                                  blob: nil, format: .webp, width: 64, height: 48, bytes: 10)
        let bytes = Pack.encode(key: .content(Self.original.blob), originalBlob: Self.original.blob, original: nil, variants: [other],
                                placeholders: [:], blobs: [], written: 0)
        let pack = try Pack.decode(bytes, expected: .content(Self.original.blob), maxOriginalBytes: 100).get()
        #expect(pack.variants.isEmpty && pack.foreign == 1 && pack.original == nil)
        #expect(throws: RemoteRecordError.self, "a site file's pack holds no original record") {
            let withOriginal = Pack.encode(key: .content(Self.original.blob), originalBlob: Self.original.blob, original: (Self.original, Credits()),
                                           variants: [], placeholders: [:], blobs: [], written: 0)
            return try Pack.decode(withOriginal, expected: .content(Self.original.blob), maxOriginalBytes: 100).get()
        }
    }

    @Test func aBlobRangeOutsideThePackIsRefused() throws {
        let (bytes, _, _) = Self.pack()
        #expect(throws: RemoteRecordError.self) { try Pack.decode(Array(bytes.dropLast(5)), expected: .original(Self.original.key), maxOriginalBytes: 100).get() }
    }

    @Test func objectPathsAreVersionedAndContentAddressed() {
        #expect(RemotePath.blob(BlobID(of: [1])) == "v2/blobs/" + BlobID(of: [1]).hex)
        let key = OriginalKey("https://x.test/a.jpg")
        #expect(RemotePath.pack(.original(key)) == "v2/packs/" + BlobID(of: Array("https://x.test/a.jpg".utf8)).hex)
        #expect(RemotePath.pack(.content(BlobID(of: [1]))) == "v2/packs/" + BlobID(of: Array(("blob:" + BlobID(of: [1]).hex).utf8)).hex)
        #expect(RemotePath.layout1Original(key) == "ac/v1/original/" + BlobID(of: Array("https://x.test/a.jpg".utf8)).hex)
        #expect(PackKey.of(Self.original) == .original(Self.original.key))
        var site = Self.original
        site.key = OriginalKey("file:img/a.jpg")
        #expect(PackKey.of(site) == .content(site.blob))
    }

    @Test func theLayoutMarkerListsLayoutsAndAnythingElseIsNotOne() throws {
        let two = try #require(RemoteLayout.parse(RemoteLayout(layouts: [2]).bytes))
        #expect(two.holdsThisVersion && two.newer.isEmpty)
        let three = try #require(RemoteLayout.parse(Array("{\"layouts\":[3]}".utf8)))
        #expect(!three.holdsThisVersion && three.newer == [3] && three.adding.layouts == [2, 3])
        for bad in ["", "{}", "{\"layouts\":[]}", "{\"layouts\":\"2\"}", "<html>", "{\"layouts\":[0]}"] {
            #expect(RemoteLayout.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    // MARK: Retention listings

    @Test func listingsAreReadFromS3AndWebDAVAnswers() {
        let s3 = """
            <?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>cache</Name>\
            <Contents><Key>site/v2/packs/ab</Key><LastModified>2026-11-25T08:00:00.000Z</LastModified><Size>1234</Size></Contents>\
            <Contents><Key>site/v2/blobs/a&amp;b</Key><LastModified>2026-11-24T08:00:00Z</LastModified><Size>5</Size></Contents>\
            <IsTruncated>true</IsTruncated></ListBucketResult>
            """[...]
        let contents = XMLText.elements("Contents", in: s3)
        #expect(contents.count == 2)
        #expect(XMLText.elements("Key", in: contents[1]).first.map(XMLText.unescape) == "site/v2/blobs/a&b")
        #expect(XMLText.elements("LastModified", in: contents[0]).first.flatMap { StoreDate.iso8601(String($0)) } == 1_795_593_600)
        #expect(XMLText.elements("LastModified", in: contents[1]).first.flatMap { StoreDate.iso8601(String($0)) } == 1_795_507_200)
        #expect(XMLText.elements("IsTruncated", in: s3) == ["true"])
        // nginx's dav-ext module: D: prefixes, a collection, a self-closing element.
        let dav = """
            <?xml version="1.0" encoding="utf-8" ?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/cache/v2/</D:href><D:propstat><D:prop>\
            <D:getlastmodified>Wed, 25 Nov 2026 08:00:00 GMT</D:getlastmodified><D:resourcetype><D:collection/></D:resourcetype></D:prop>\
            </D:propstat></D:response><D:response><D:href>/cache/v2/packs/ab</D:href><D:propstat><D:prop><D:getcontentlength>77</D:getcontentlength>\
            <D:getlastmodified>Wed, 25 Nov 2026 08:00:00 GMT</D:getlastmodified><D:resourcetype/></D:prop></D:propstat></D:response></D:multistatus>
            """[...]
        let responses = XMLText.elements("response", in: dav)
        #expect(responses.count == 2)
        #expect(XMLText.elements("resourcetype", in: responses[0]).first?.contains("collection") == true)
        #expect(XMLText.elements("resourcetype", in: responses[1]).first == "")
        #expect(XMLText.elements("getcontentlength", in: responses[1]) == ["77"])
        #expect(XMLText.elements("href", in: responses[1]) == ["/cache/v2/packs/ab"])
        #expect(XMLText.escape("a<&>") == "a&lt;&amp;&gt;")
    }

    @Test func s3ListingQueriesAreSentInSignatureV4sCanonicalForm() {
        #expect(RemoteRetention.Lister.encode("site/v2/packs/ab-c_d.e~f") == "site%2Fv2%2Fpacks%2Fab-c_d.e~f")
        #expect(RemoteRetention.Lister.encode("a b+é") == "a%20b%2B%C3%A9")
    }
}
