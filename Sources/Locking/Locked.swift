#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex. Not the standard library's `Synchronization.Mutex`: on Linux it
/// locks with raw futex calls that ThreadSanitizer cannot see, so every value it guards was reported
/// as a data race (`make sanitize`: 49 reports, all of them Mutex-guarded state; a two-thread
/// `withLock { $0.append }` reproduces it). pthread mutexes are intercepted by TSan.
public final class Locked<Value>: @unchecked Sendable {
    // `value` is only touched between lock and unlock of `mutex`.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
