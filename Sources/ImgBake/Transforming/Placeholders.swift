import Foundation
import Vips

/// What a page can show while an image loads, computed from the decoded source once and kept in the
/// cache: the dominant colour (`#rrggbb`), a tiny blurred preview as a data URI, or a BlurHash.
enum Placeholders {
    static func make(_ kind: Placeholder, from image: VipsImage) throws(VipsError) -> String? {
        switch kind {
        case .none: return nil
        case .color: return dominantColour(try RGBPixels(try small(image, 64)))
        case .lqip: return try lqip(try small(image, 16))
        case .blurhash: return BlurHash.encode(try RGBPixels(try small(image, 32)), x: 4, y: 3)
        }
    }

    /// The average of the most common colour bin (4 bits per channel), ignoring transparent pixels.
    static func dominantColour(_ pixels: RGBPixels) -> String {
        var counts = [Int](repeating: 0, count: 4096)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 4096)
        pixels.forEachOpaque { r, g, b in
            let bin = Int(r >> 4) << 8 | Int(g >> 4) << 4 | Int(b >> 4)
            counts[bin] += 1
            sums[bin].0 += Int(r); sums[bin].1 += Int(g); sums[bin].2 += Int(b)
        }
        guard let best = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[best] > 0 else { return "#000000" }
        let n = counts[best]
        return "#" + [sums[best].0 / n, sums[best].1 / n, sums[best].2 / n].map { Hex.lowercase([UInt8($0)]) }.joined()
    }

    /// The first frame, at most `width` pixels wide, in memory.
    private static func small(_ image: VipsImage, _ width: Int) throws(VipsError) -> VipsImage {
        let frame = try image.firstFrame()
        return try frame.resized(width: min(width, frame.width)).materialized()
    }

    /// 16 px wide, slightly blurred, as a low-quality WebP data URI (a few hundred bytes).
    static func lqip(_ tiny: VipsImage) throws(VipsError) -> String {
        let tiny = try tiny.blurred(sigma: 0.7)
        let bytes = WebPContainer.strippingMetadata(try tiny.removingFields { _ in true }.encoded(as: .webp(quality: 40, effort: 4)))
        return "data:image/webp;base64," + Data(bytes).base64EncodedString()
    }
}

/// 8-bit pixels as RGB(A), whatever the band count of the decoded image.
struct RGBPixels {
    let width: Int
    let height: Int
    private let bytes: [UInt8]
    private let bands: Int

    init(_ image: VipsImage) throws(VipsError) {
        let eight = try image.eightBit()
        width = eight.width
        height = eight.height
        bands = eight.bands
        bytes = try eight.pixels()
    }

    /// r, g, b and alpha (255 when there is none) of pixel (x, y).
    func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        let i = (y * width + x) * bands
        switch bands {
        case 1: return (bytes[i], bytes[i], bytes[i], 255)
        case 2: return (bytes[i], bytes[i], bytes[i], bytes[i + 1])
        case 3: return (bytes[i], bytes[i + 1], bytes[i + 2], 255)
        default: return (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3])
        }
    }

    func forEachOpaque(_ body: (UInt8, UInt8, UInt8) -> Void) {
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b, a) = pixel(x, y)
                if a >= 128 { body(r, g, b) }
            }
        }
    }
}

/// The BlurHash encoding (https://blurha.sh): `x` × `y` cosine components of the image in linear RGB,
/// quantised and written in base 83.
enum BlurHash {
    static func encode(_ pixels: RGBPixels, x componentsX: Int, y componentsY: Int) -> String {
        var factors: [(Double, Double, Double)] = []
        let (w, h) = (pixels.width, pixels.height)
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation: Double = (i == 0 && j == 0) ? 1 : 2
                var r = 0.0, g = 0.0, b = 0.0
                for y in 0..<h {
                    let cy = cos(Double.pi * Double(j) * Double(y) / Double(h))
                    for x in 0..<w {
                        let basis = normalisation * cos(Double.pi * Double(i) * Double(x) / Double(w)) * cy
                        let p = pixels.pixel(x, y)
                        r += basis * sRGBToLinear(p.0)
                        g += basis * sRGBToLinear(p.1)
                        b += basis * sRGBToLinear(p.2)
                    }
                }
                let scale = 1 / Double(w * h)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        let dc = factors[0], ac = factors.dropFirst()
        var hash = base83((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        var maximum = 1.0
        if ac.isEmpty {
            hash += base83(0, length: 1)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max()!
            let quantised = max(0, min(82, Int((actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, length: 1)
        }
        hash += base83(linearToSRGB(dc.0) << 16 | linearToSRGB(dc.1) << 8 | linearToSRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ v: Double) -> Int { max(0, min(18, Int((signedPow(v / maximum, 0.5) * 9 + 9.5).rounded(.down)))) }
            hash += base83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    private static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    private static func base83(_ value: Int, length: Int) -> String {
        var result = ""
        for i in 1...length {
            var divisor = 1
            for _ in 0..<(length - i) { divisor *= 83 }
            result.append(digits[(value / divisor) % 83])
        }
        return result
    }

    private static func sRGBToLinear(_ value: UInt8) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    private static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    private static func signedPow(_ value: Double, _ exponent: Double) -> Double {
        value < 0 ? -pow(-value, exponent) : pow(value, exponent)
    }
}
