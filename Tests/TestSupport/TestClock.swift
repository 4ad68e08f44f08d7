import Foundation
import Locking
@testable import ImgBake

/// An injectable wall clock for freshness and failure-memory tests: it stands still until moved.
package final class TestClock: WallClock {
    private let seconds: Locked<Double>

    package init(_ start: Double = Date().timeIntervalSince1970) { seconds = Locked(start) }

    package func now() -> Double { seconds.withLock { $0 } }

    package func advance(hours: Double) { seconds.withLock { $0 += hours * 3600 } }
    package func advance(days: Double) { advance(hours: days * 24) }
}

/// The system's clock moved on by a fixed offset (days ahead, for freshness).
package struct OffsetClock: WallClock {
    package var offset: Double
    package init(offset: Double) { self.offset = offset }
    package func now() -> Double { Date().timeIntervalSince1970 + offset }
}

