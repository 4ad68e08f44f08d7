import Foundation
import Locking

extension Array where Element: Sendable {
    /// `transform` applied to slices of `slice` elements on every core, the results joined in order.
    /// Each call gets a whole slice, so it can keep what it learns (a cache of files seen) across it.
    /// For work over thousands of small items (a `stat` each, decoding a line each), where one task
    /// per item would cost more than the item.
    func mapOnEveryCore<T: Sendable>(slice: Int, _ transform: @Sendable (ArraySlice<Element>) -> [T]) -> [T] {
        let slices = (count + slice - 1) / slice
        let parts = Locked([[T]](repeating: [], count: slices))
        DispatchQueue.concurrentPerform(iterations: slices) { part in
            let mine = transform(self[part * slice ..< Swift.min(count, (part + 1) * slice)])
            parts.withLock { $0[part] = mine }
        }
        return [T](parts.withLock { $0 }.joined())
    }
}
