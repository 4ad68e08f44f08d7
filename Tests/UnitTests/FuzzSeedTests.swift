import Foundation
import FuzzProperties
import ImgBake
import ImgBakeTestSupport
import Testing

/// Every committed corpus input (Tests/Fuzz/<target>/corpus) passes its target's checks: the inputs
/// that once failed, kept in the corpus, stay fixed without a fuzz build (`make fuzz` explores further).
@Suite struct FuzzSeedTests {
    @Test(arguments: FuzzTarget.allCases)
    func everyCorpusInputPassesItsTargetsChecks(_ target: FuzzTarget) throws {
        let folder = Paths.root + "/Tests/Fuzz/\(target.rawValue)/corpus"
        let inputs = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(!inputs.isEmpty, "no corpus in \(folder)")
        for name in inputs {
            let input = try #require(FileManager.default.contents(atPath: folder + "/" + name))
            let failure = target.check(Array(input))
            #expect(failure == nil, "\(target.rawValue)/corpus/\(name): \(failure ?? "")")
        }
    }

    /// The remote-pack target's starting points are packs as imgbake writes them; each is read as a
    /// pack (the property would pass vacuously on inputs it rejects). `IMGBAKE_WRITE_FUZZ_SEEDS=1`
    /// adds them to the corpus.
    @Test func remotePackSamplesAreReadAsPacks() throws {
        let samples = RemotePackProperty.samples()
        for sample in samples {
            #expect(FuzzTarget.remotePack.check(sample) == nil)
        }
        #expect(samples.filter { RemotePackProperty.reads($0) }.count == samples.count - 1, "every sample but layout.json is a pack")
        guard ProcessInfo.processInfo.environment["IMGBAKE_WRITE_FUZZ_SEEDS"] == "1" else { return }
        for sample in samples {
            let name = BlobID(of: sample).hex.prefix(40)
            try Data(sample).write(to: URL(fileURLWithPath: Paths.root + "/Tests/Fuzz/remote-pack/corpus/\(name)"))
        }
    }

    /// A damaged pack is refused or taken without what does not check out, never trusted.
    @Test func aPackWithABlobThatDoesNotHashIsNotTrusted() throws {
        var damaged = RemotePackProperty.samples()[0]
        damaged[damaged.count - 1] ^= 0x01
        #expect(FuzzTarget.remotePack.check(damaged) == nil)
        #expect(RemotePackProperty.reads(damaged))
    }
}
