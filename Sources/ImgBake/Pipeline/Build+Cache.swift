import Foundation

/// The build's use of the cache: opening it, locking it, keeping it within its budget.
extension Build {
    func makeResolver() throws(BuildError) -> Resolver {
        do {
            return try Resolver(configuration: configuration, now: now)
        } catch let error as BuildError {
            throw error
        } catch {
            throw BuildError(.failed, "cannot open the cache at \(configuration.cache.directory): \(error)")
        }
    }

    func lockCache(_ mode: CacheLock.Mode, wait: Bool) throws(BuildError) -> CacheLock? {
        do { return try CacheLock(directory: configuration.cache.directory, mode: mode, wait: wait) } catch {
            throw BuildError(.failed, "cannot lock the cache at \(configuration.cache.directory): \(error)")
        }
    }

    /// Keeps the cache under `cache.max_size` after a build, if no other build is using it now.
    /// What this build used is never evicted.
    func collectGarbage(_ cache: ImageCache, maxBytes: Int, protectedSince: Double) -> [Diagnostic] {
        guard let exclusive = try? lockCache(.exclusive, wait: false) else {
            return [Diagnostic(.note, "cache: size budget not enforced this time: another build is using the cache")]
        }
        defer { _ = exclusive }
        do {
            let report = try CacheMaintenance.collect(cache, maxBytes: maxBytes, protectedSince: protectedSince)
            var notes: [Diagnostic] = []
            if report.removedFiles > 0 {
                notes.append(Diagnostic(.note, "cache: evicted \(report.removedEntries) entries (\(ByteCount.describe(report.freedBytes))) to stay under \(ByteCount.describe(maxBytes))"))
            }
            if report.overBudget {
                notes.append(Diagnostic(.warning, "cache: \(ByteCount.describe(report.remainingBytes)) is over the \(ByteCount.describe(maxBytes)) budget: this build alone uses more"))
            }
            return notes
        } catch {
            return [Diagnostic(.warning, "cache: garbage collection failed: \(error)")]
        }
    }
}
