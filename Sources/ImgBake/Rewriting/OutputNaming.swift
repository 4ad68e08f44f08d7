/// Output file names and the URLs pages use for them.
public struct OutputNaming: Sendable {
    public var publicPath: String

    public init(publicPath: String) {
        self.publicPath = publicPath.hasSuffix("/") ? publicPath : publicPath + "/"
    }

    /// A file-name-safe stem from the URL's last path segment: lower-case letters, digits and dashes,
    /// at most 40 characters, `image` when nothing is left.
    public static func stem(for source: ImageSource) -> String {
        var name = source.lastPathSegment
        if let dot = name.lastIndex(of: "."), dot > name.startIndex { name = String(name[..<dot]) }
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return asciiStem(name) }
        var out = ""
        var lastWasDash = true
        for scalar in name.lowercased().unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                out.unicodeScalars.append(scalar)
                lastWasDash = false
            } else if !lastWasDash {
                out += "-"
                lastWasDash = true
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        let capped = String(out.prefix(40))
        return capped.isEmpty ? "image" : (capped.hasSuffix("-") ? String(capped.dropLast()) : capped)
    }

    /// The same for an ASCII name, on its bytes: Unicode properties per character were 5 % of a warm
    /// build's CPU.
    private static func asciiStem(_ name: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(min(name.utf8.count, 40))
        var lastWasDash = true
        for byte in name.utf8 {
            let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            if (0x61...0x7A).contains(lower) || (0x30...0x39).contains(lower) {
                out.append(lower)
                lastWasDash = false
            } else if !lastWasDash {
                out.append(UInt8(ascii: "-"))
                lastWasDash = true
            }
        }
        while out.last == UInt8(ascii: "-") { out.removeLast() }
        if out.count > 40 { out.removeLast(out.count - 40) }
        if out.last == UInt8(ascii: "-") { out.removeLast() }
        return out.isEmpty ? "image" : String(decoding: out, as: UTF8.self)
    }

    public func fileName(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        variant.fileName(stem: Self.stem(for: image.url))
    }

    public func url(_ variant: StoredVariant, of image: ResolvedImage) -> String {
        publicPath + fileName(variant, of: image)
    }

    /// `url 480w, url 960w` for the variants of one format.
    public func srcset(_ variants: [StoredVariant], of image: ResolvedImage) -> String {
        variants.map { "\(url($0, of: image)) \($0.width)w" }.joined(separator: ", ")
    }
}

/// A file the build writes into the images folder.
public struct OutputImage: Sendable, Hashable {
    public var fileName: String
    public var blob: BlobID
    public var bytes: Int
    public var key: OriginalKey
}
