import Foundation
import Locking

/// An injectable wall clock for freshness and failure-memory tests.
package final class TestClock: Sendable {
    private let seconds: Locked<Double>

    package init(_ start: Double = Date().timeIntervalSince1970) { seconds = Locked(start) }

    package var now: @Sendable () -> Double { { [self] in seconds.withLock { $0 } } }

    package func advance(hours: Double) { seconds.withLock { $0 += hours * 3600 } }
}
