import Foundation

/// Sizes as the configuration and `--max-size` write them: `500MB`, `5GB`, `1.5G`, `800KiB`, `1048576`.
public enum ByteSize {
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." || $0 == "_" }
        guard let value = Double(digits.replacingOccurrences(of: "_", with: "")), value >= 0 else { return nil }
        let units: [String: Double] = [
            "": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
            "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
        ]
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        guard let multiplier = units[unit] else { return nil }
        return Int(value * multiplier)
    }
}

/// Sizes as people read them: `812 B`, `1.50 MB`.
public enum ByteCount {
    public static func describe(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return "\(String(format2: Double(bytes) / 1024)) KB" }
        if bytes < 1024 * 1024 * 1024 { return "\(String(format2: Double(bytes) / 1048576)) MB" }
        return "\(String(format2: Double(bytes) / 1073741824)) GB"
    }
}

extension String {
    /// Two decimals, without Foundation's locale-dependent formatting.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
