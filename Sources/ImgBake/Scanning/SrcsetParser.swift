/// One image candidate of a `srcset` attribute.
public struct SrcsetCandidate: Sendable, Hashable {
    /// The URL as written.
    public var url: String
    /// Byte range of the URL within the parsed bytes.
    public var urlRange: Range<Int>
    /// Descriptors as written (`480w`, `2x`, ...); empty means `1x`.
    public var descriptors: [String]
}

/// The HTML standard's "parse a srcset attribute" algorithm, keeping byte ranges. URLs may contain
/// commas (a comma ends a URL only when it is the URL's last character); descriptors may be absent.
/// Candidates with invalid descriptors are kept (a browser drops them, but rewriting the URL is
/// harmless and keeps the page as the author wrote it).
public enum SrcsetParser {
    public static func parse(_ bytes: some Collection<UInt8>) -> [SrcsetCandidate] {
        let input = Array(bytes)
        var candidates: [SrcsetCandidate] = []
        var position = 0
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0C || b == 0x0D }
        let comma = UInt8(ascii: ",")

        while true {
            while position < input.count, isSpace(input[position]) || input[position] == comma { position += 1 }
            guard position < input.count else { return candidates }
            let urlStart = position
            while position < input.count, !isSpace(input[position]) { position += 1 }
            var urlEnd = position
            var descriptors: [String] = []
            if input[urlEnd - 1] == comma {
                while urlEnd > urlStart, input[urlEnd - 1] == comma { urlEnd -= 1 }
            } else {
                descriptors = tokenizeDescriptors(input, &position)
            }
            if urlEnd > urlStart {
                candidates.append(SrcsetCandidate(
                    url: String(decoding: input[urlStart..<urlEnd], as: UTF8.self),
                    urlRange: urlStart..<urlEnd, descriptors: descriptors))
            }
        }
    }

    /// The descriptor tokenizer: whitespace separates descriptors, a comma ends the candidate, and
    /// parentheses group (so `(a, b)` is one token).
    private static func tokenizeDescriptors(_ input: [UInt8], _ position: inout Int) -> [String] {
        enum State { case inDescriptor, inParens, afterDescriptor }
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0C || b == 0x0D }
        while position < input.count, isSpace(input[position]) { position += 1 }
        var descriptors: [String] = []
        var current: [UInt8] = []
        var state = State.inDescriptor
        func flush() {
            if !current.isEmpty { descriptors.append(String(decoding: current, as: UTF8.self)) }
            current.removeAll()
        }
        while position < input.count {
            let c = input[position]
            switch state {
            case .inDescriptor:
                if isSpace(c) {
                    flush()
                    state = .afterDescriptor
                } else if c == UInt8(ascii: ",") {
                    position += 1
                    flush()
                    return descriptors
                } else {
                    if c == UInt8(ascii: "(") { state = .inParens }
                    current.append(c)
                }
            case .inParens:
                if c == UInt8(ascii: ")") { state = .inDescriptor }
                current.append(c)
            case .afterDescriptor:
                if !isSpace(c) {
                    state = .inDescriptor
                    continue // reconsume
                }
            }
            position += 1
        }
        flush()
        return descriptors
    }
}
