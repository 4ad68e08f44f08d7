/// Lower-case hexadecimal, for digests.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
