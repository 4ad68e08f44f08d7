@testable import Curl
import Testing

/// The order in which the HTTP session lets its queued requests run, without sockets: the session's
/// owner thread starts what `next` hands out and sleeps only when `maySleep` says so.
@Suite struct AdmissionTests {
    /// Everything `next` hands out now, in order.
    private func started(_ admission: inout Admission<String>) -> [String] {
        var started: [String] = []
        while let (_, item) = admission.next() { started.append(item) }
        return started
    }

    @Test func aFreedSlotGoesToTheNextWaitingRequestBeforeTheLoopSleeps() {
        var admission = Admission<String>(maxConcurrent: 1, maxPerHost: 1)
        for name in ["a", "b", "c"] { admission.ask(name, host: "http://origin") }
        #expect(started(&admission) == ["a"])
        #expect(admission.maySleep, "b and c wait for a's slot, so the loop may sleep until a socket wakes it")
        admission.ended(host: "http://origin")
        #expect(!admission.maySleep, "a's slot is free and b waits: the loop must not sleep before starting it")
        #expect(started(&admission) == ["b"])
        admission.ended(host: "http://origin")
        #expect(started(&admission) == ["c"])
        admission.ended(host: "http://origin")
        #expect(admission.maySleep && started(&admission).isEmpty)
    }

    @Test func aFullHostDoesNotHoldUpTheRequestsBehindIt() {
        var admission = Admission<String>(maxConcurrent: 4, maxPerHost: 2)
        for (name, host) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("a4", "a"), ("c1", "c")] {
            admission.ask(name, host: host)
        }
        #expect(started(&admission) == ["a1", "a2", "b1", "c1"])
        #expect(admission.maySleep)
        admission.ended(host: "b")
        #expect(admission.maySleep, "a slot is free, but only for a host other than a, and nothing waits for one")
        admission.ended(host: "a")
        #expect(started(&admission) == ["a3"])
        admission.ended(host: "a")
        #expect(started(&admission) == ["a4"])
    }

    @Test func theSessionsLimitHoldsOverEveryHost() {
        var admission = Admission<String>(maxConcurrent: 2, maxPerHost: 4)
        for (name, host) in [("a1", "a"), ("b1", "b"), ("c1", "c")] { admission.ask(name, host: host) }
        #expect(started(&admission) == ["a1", "b1"])
        admission.ended(host: "a")
        #expect(started(&admission) == ["c1"])
    }

    /// A request that could not start (no certificate store, no easy handle) gives its slot back.
    @Test func aRequestThatCouldNotStartFreesItsSlot() {
        var admission = Admission<String>(maxConcurrent: 1, maxPerHost: 1)
        admission.ask("a", host: "h")
        admission.ask("b", host: "h")
        let first = admission.next()
        #expect(first?.item == "a")
        admission.ended(host: "h")
        #expect(admission.next()?.item == "b")
    }

    @Test func aStopTakesWhatWaitsInTheOrderAsked() {
        var admission = Admission<String>(maxConcurrent: 1, maxPerHost: 1)
        for name in ["a", "b", "c"] { admission.ask(name, host: "h") }
        #expect(started(&admission) == ["a"])
        #expect(admission.drain() == ["b", "c"])
        admission.ended(host: "h")
        #expect(started(&admission).isEmpty && admission.maySleep)
    }
}
