extension Array where Element: Sendable {
    /// `transform` applied to slices of `slice` elements on the threads of `pool`, the results joined
    /// in order. Each call gets a whole slice, so it can keep what it learns (a cache of files seen)
    /// across it. For work over thousands of small items (a `stat` each, decoding a line each), where
    /// one task per item would cost more than the item.
    func map<T: Sendable>(slicesOf slice: Int, on pool: WorkerPool,
                          _ transform: @escaping @Sendable (ArraySlice<Element>) -> [T]) async -> [T] {
        let slices = (count + slice - 1) / slice
        guard slices > 1 else { return await pool.run { transform(self[...]) } }
        var parts = [[T]](repeating: [], count: slices)
        await withTaskGroup(of: (Int, [T]).self) { group in
            for part in 0..<slices {
                let items = self[part * slice ..< Swift.min(count, (part + 1) * slice)]
                group.addTask(executorPreference: pool) { (part, transform(items)) }
            }
            for await (part, mine) in group { parts[part] = mine }
        }
        return [T](parts.joined())
    }
}
