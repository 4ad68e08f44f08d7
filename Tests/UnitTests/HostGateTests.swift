import Testing
@testable import ImgBake

/// The first request to a host goes alone; the others wait for its outcome and then all go, or all
/// fail at once with its reason.
@Suite struct HostGateTests {
    @Test func theFirstGoesAndTheOthersFollowItsOutcome() async throws {
        for reachable in [true, false] {
            let gate = HostGate()
            #expect(await gate.admit("https://a.example") == .go)
            // Five more ask while the first is under way: none is answered yet.
            let waiting = (0..<5).map { _ in Task { await gate.admit("https://a.example") } }
            try await Task.sleep(for: .milliseconds(50))
            // Another host is not held up.
            #expect(await gate.admit("https://b.example") == .go)
            if reachable { gate.answered("https://a.example") } else { gate.couldNotReach("https://a.example", reason: "no DNS") }
            for task in waiting {
                #expect(await task.value == (reachable ? .go : .unreachable("no DNS")))
            }
            // And later ones are decided at once.
            #expect(await gate.admit("https://a.example") == (reachable ? .go : .unreachable("no DNS")))
            #expect(gate.unreachable == (reachable ? [:] : ["https://a.example": "no DNS"]))
        }
    }

    @Test func aHostRememberedAsUnreachableFailsFromTheStart() async {
        let gate = HostGate(unreachable: ["http://gone.example": "could not resolve the host, 40 s ago"])
        #expect(await gate.admit("http://gone.example") == .unreachable("could not resolve the host, 40 s ago"))
        #expect(await gate.admit("http://other.example") == .go)
    }

    /// A host that answered and then could not be reached (it went down mid-build): the rest fail.
    @Test func aHostLostLaterFailsTheRest() async {
        let gate = HostGate()
        #expect(await gate.admit("http://a.example") == .go)
        gate.answered("http://a.example")
        gate.couldNotReach("http://a.example", reason: "refused")
        #expect(await gate.admit("http://a.example") == .unreachable("refused"))
    }
}
