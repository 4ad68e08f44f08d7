/// `--connect-to HOST:PORT:CONNECT_HOST:CONNECT_PORT` entries (curl's syntax).
enum ConnectTo {
    /// Splits on `:` outside `[...]` (IPv6 literals).
    static func split(_ entry: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var inBrackets = false
        for c in entry {
            if c == "[" { inBrackets = true } else if c == "]" { inBrackets = false }
            if c == ":" && !inBrackets {
                parts.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        parts.append(current)
        return parts
    }
}
