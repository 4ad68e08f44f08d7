import Foundation

/// HTTP freshness of a cached original: `Cache-Control: max-age` (or `no-cache`/`no-store`: always
/// stale), else `Expires`, else the configured TTL, counted from the last 200 or 304.
enum Freshness {
    static func isFresh(_ record: OriginalRecord, now: Double, defaultTTL: Duration) -> Bool {
        now < expiry(record, defaultTTL: defaultTTL)
    }

    /// Unix seconds after which the record is stale.
    static func expiry(_ record: OriginalRecord, defaultTTL: Duration) -> Double {
        if let cacheControl = record.validators.cacheControl?.lowercased() {
            let directives = cacheControl.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if directives.contains("no-cache") || directives.contains("no-store") { return record.fetchedAt }
            if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }).flatMap({ Double($0.dropFirst(8)) }) {
                return record.fetchedAt + maxAge
            }
        }
        if let expires = record.validators.expires, let date = HTTPDate.parse(expires) {
            return date.timeIntervalSince1970
        }
        return record.fetchedAt + Double(defaultTTL.components.seconds)
    }
}

enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
