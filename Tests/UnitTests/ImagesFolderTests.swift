import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The images folder's one owner, on a real folder with the store and the blobs in memory: each name's
/// status (there, writable from a verified blob, to remake, unavailable), asked once per build, and the
/// one repair path.
@Suite struct ImagesFolderTests {
    final class World: Sendable {
        let folder = TemporaryFolder()
        let blobs: InMemoryBlobs
        let store: InMemorySiteStates
        let repairs = NoRepairs()
        let pool = WorkerPool(threads: 1, name: "images-folder-test")
        let images: ImagesFolder

        /// `records`: names the store knows, with the bytes of their blobs (added to the cache unless nil).
        init(records: [String: [UInt8]?] = [:]) throws {
            let blobs = InMemoryBlobs()
            self.blobs = blobs
            var contents = InMemorySiteStates.Contents()
            for (name, bytes) in records {
                let blob = bytes.map { blobs.add($0) } ?? BlobID(of: Array(name.utf8))
                contents.outputs[name] = OutputRecord(name: name, blob: blob, key: OriginalKey("https://img.test/" + name), url: "https://img.test/" + name)
            }
            store = InMemorySiteStates(contents)
            let folder = self.folder
            folder.write("site/index.html", "<p>a site</p>")
            var config = Configuration(site: folder.path + "/site", cacheDirectory: folder.path + "/cache", jobs: 1)
            config.outputDirectory = folder.path + "/out"
            images = ImagesFolder(try BuildPlan(config, now: 0), store: store, cache: blobs, repairs: repairs, pool: pool)
        }

        func put(_ name: String) { folder.write("out/_img/" + name, "bytes") }

        deinit { let pool = self.pool; Task { await pool.shutdown() } }
    }

    @Test func aFileSeenThereIsNotLookedAtAgain() throws {
        let world = try World()
        #expect(!world.images.isThere("a-0123456789-320.webp"))
        world.put("a-0123456789-320.webp")
        #expect(world.images.isThere("a-0123456789-320.webp"))
        // Nothing removes a file while pages are built: once seen, the answer stands.
        try FileManager.default.removeItem(atPath: world.images.path + "/a-0123456789-320.webp")
        #expect(world.images.isThere("a-0123456789-320.webp"))
        #expect(world.images.holdsAll(["a-0123456789-320.webp"]) && !world.images.holdsAll(["a-0123456789-320.webp", "b.webp"]))
    }

    @Test func anAbsentFileWithAWholeBlobIsWritable() async throws {
        let world = try World(records: ["a-0123456789-320.webp": [1, 2, 3]])
        let missing = await world.images.absent(among: ["a-0123456789-320.webp"])
        #expect(missing["a-0123456789-320.webp"]?.isWritable == true)
        #expect(world.repairs.asked.withLock { $0 }.isEmpty, "nothing to make again")
    }

    @Test func aFileThereIsNotAmongTheAbsent() async throws {
        let world = try World(records: ["a-0123456789-320.webp": [1, 2, 3]])
        world.put("a-0123456789-320.webp")
        #expect(await world.images.absent(among: ["a-0123456789-320.webp"]).isEmpty)
    }

    @Test func aNameTheCacheHasNoRecordOfIsUnavailable() async throws {
        let world = try World()
        guard case .unavailable(let why) = await world.images.missingFile("x-0123456789-320.webp") else { Issue.record(); return }
        #expect(why.contains("no record"))
    }

    @Test func aDamagedBlobIsRemadeThroughTheOneRepairPathOncePerBuild() async throws {
        let world = try World(records: ["a-0123456789-320.webp": [1, 2, 3]])
        let blob = try #require(world.store.now.outputs["a-0123456789-320.webp"]?.blob)
        world.blobs.damage(blob)
        for _ in 0..<3 {
            guard case .unavailable(let why) = await world.images.missingFile("a-0123456789-320.webp") else { Issue.record(); return }
            #expect(why.contains("no longer gives the same file"))
        }
        #expect(world.repairs.asked.withLock { $0 } == [OriginalKey("https://img.test/a-0123456789-320.webp")], "asked once, however many pages name it")
    }

    @Test func aGoneBlobIsRemadeToo() async throws {
        let world = try World(records: ["a-0123456789-320.webp": nil])
        _ = await world.images.missingFile("a-0123456789-320.webp")
        #expect(world.repairs.asked.withLock { $0 }.count == 1)
    }

    @Test func writesAFileOnceAndSaysWhatItPlaced() async throws {
        let world = try World()
        let blob = world.blobs.add([7, 7, 7])
        let output = OutputImage(fileName: "a-0123456789-320.webp", blob: blob, bytes: 3, key: OriginalKey("https://img.test/a"))
        let first = try await world.images.write([output])
        #expect(first.written == 1 && first.placed == ["a-0123456789-320.webp"])
        let again = try await world.images.write([output])
        #expect(again.written == 0 && again.placed.isEmpty && world.blobs.copied == 1)
        #expect(world.images.isThere("a-0123456789-320.webp"))
    }

    @Test func aDamagedBlobIsNotWrittenAndIsTriedAgain() async throws {
        let world = try World()
        let blob = world.blobs.add([9, 9])
        world.blobs.damage(blob)
        let output = OutputImage(fileName: "b-0123456789-320.webp", blob: blob, bytes: 2, key: OriginalKey("https://img.test/b"))
        let written = try await world.images.write([output])
        #expect(written.damaged == ["b-0123456789-320.webp"] && written.written == 0 && written.notes.count == 1)
        #expect(!FileManager.default.fileExists(atPath: world.images.path + "/b-0123456789-320.webp"))
        #expect(try await world.images.write([output]).damaged == ["b-0123456789-320.webp"], "forgotten, so checked again")
    }
}
