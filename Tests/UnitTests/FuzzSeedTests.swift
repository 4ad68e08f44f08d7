import Foundation
import ImgBake
import ImgBakeTestSupport
import Testing

/// Every committed fuzz seed (Tests/Fuzz/<target>/seeds) passes its target's checks: the inputs that
/// once failed, kept among the seeds, stay fixed without a fuzz build (`make fuzz` explores further).
@Suite struct FuzzSeedTests {
    @Test(arguments: FuzzTarget.allCases)
    func everySeedPassesItsTargetsChecks(_ target: FuzzTarget) throws {
        let folder = Paths.root + "/Tests/Fuzz/\(target.rawValue)/seeds"
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(!seeds.isEmpty, "no seeds in \(folder)")
        for seed in seeds {
            let input = try #require(FileManager.default.contents(atPath: folder + "/" + seed))
            let failure = target.check(Array(input))
            #expect(failure == nil, "\(target.rawValue)/seeds/\(seed): \(failure ?? "")")
        }
    }
}
