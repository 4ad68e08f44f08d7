/// One image candidate of a `srcset` attribute.
public struct SrcsetCandidate: Sendable, Hashable {
    /// The URL as written.
    public var url: String
    /// Byte range of the URL within the parsed bytes.
    public var urlRange: Range<Int>
    /// Descriptors as written (`480w`, `2x`, ...); empty means `1x`.
    public var descriptors: [String]
}

/// The HTML standard's "parse a srcset attribute" algorithm, keeping byte ranges. It works on the
/// attribute's value with character references decoded. URLs may contain commas (a comma ends a URL
/// only when it is the URL's last character); descriptors may be absent. A candidate whose
/// descriptors are not valid (`foo`, `1x 2x`, `0w`, `1w 1x`, an `h` without a `w`) is dropped, as
/// a browser drops it: its URL is never loaded, so it is not an image reference.
public enum SrcsetParser {
    public static func parse(_ bytes: some Collection<UInt8>) -> [SrcsetCandidate] {
        let input = Array(bytes)
        var candidates: [SrcsetCandidate] = []
        var position = 0
        let comma = UInt8(ascii: ",")

        while true {
            // Splitting loop.
            while position < input.count, input[position].isHTMLSpace || input[position] == comma { position += 1 }
            guard position < input.count else { return candidates }
            let urlStart = position
            while position < input.count, !input[position].isHTMLSpace { position += 1 }
            var urlEnd = position
            var descriptors: [String] = []
            if input[urlEnd - 1] == comma {
                while urlEnd > urlStart, input[urlEnd - 1] == comma { urlEnd -= 1 }
            } else {
                descriptors = tokenizeDescriptors(input, &position)
            }
            if urlEnd > urlStart, descriptorsAreValid(descriptors) {
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
        while position < input.count, input[position].isHTMLSpace { position += 1 }
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
                if c.isHTMLSpace {
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
                if !c.isHTMLSpace {
                    state = .inDescriptor
                    continue // reconsume
                }
            }
            position += 1
        }
        flush()
        return descriptors
    }

    /// The descriptor parser: at most one of a width (`480w`, a positive integer) or a density (`2x`,
    /// a non-negative floating-point number), and a height (`300h`, a positive integer) only beside
    /// a width; nothing else.
    private static func descriptorsAreValid(_ descriptors: [String]) -> Bool {
        var width = false, density = false, height = false
        for descriptor in descriptors {
            let number = Array(descriptor.utf8.dropLast())
            switch descriptor.utf8.last {
            case UInt8(ascii: "w"):
                guard !width, !density, isPositiveInteger(number) else { return false }
                width = true
            case UInt8(ascii: "x"):
                guard !width, !density, !height, isValidFloat(number), number.first != UInt8(ascii: "-") || isZero(number)
                else { return false }
                density = true
            case UInt8(ascii: "h"):
                guard !height, !density, isPositiveInteger(number) else { return false }
                height = true
            default:
                return false
            }
        }
        return !height || width
    }

    /// A valid non-negative integer (ASCII digits only) that is not zero.
    private static func isPositiveInteger(_ text: [UInt8]) -> Bool {
        !text.isEmpty && text.allSatisfy(\.isASCIIDigit) && text.contains { $0 != UInt8(ascii: "0") }
    }

    /// The HTML standard's valid floating-point number: `-`? then digits, `.digits` or both, then
    /// optionally `e` or `E`, `-` or `+`, digits.
    private static func isValidFloat(_ text: [UInt8]) -> Bool {
        var i = 0
        func digits() -> Int {
            let start = i
            while i < text.count, text[i].isASCIIDigit { i += 1 }
            return i - start
        }
        if i < text.count, text[i] == UInt8(ascii: "-") { i += 1 }
        let integer = digits()
        if i < text.count, text[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        } else if integer == 0 {
            return false
        }
        if i < text.count, text[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < text.count, text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == text.count
    }

    /// A number whose digits are all zero (`-0`, `-0.0e5`): not less than zero.
    private static func isZero(_ text: [UInt8]) -> Bool {
        let mantissa = text.prefix { $0 | 0x20 != UInt8(ascii: "e") }
        return mantissa.allSatisfy { !$0.isASCIIDigit || $0 == UInt8(ascii: "0") }
    }
}
