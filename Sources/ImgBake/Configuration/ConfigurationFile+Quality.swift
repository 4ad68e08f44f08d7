/// `images.quality`: `"auto"` for every lossy format, or a table of fixed numbers and `"auto"`s with
/// an optional `auto` table (target SSIM, and a floor and ceiling per format). Its keys are those
/// `ConfigurationKey.all` lists under `images.quality`.
extension Reader {
    func applyQuality(_ name: String, _ node: TOMLNode, to quality: inout ImageSettings.Quality) throws(ConfigurationError) {
        let known = ConfigurationKey.children(of: name).map(\.short)
        let formats = known.compactMap(ImageFormat.init(rawValue:))
        if case .string = node.value {
            guard try string(name, node) == "auto" else { throw fail(name, node, "expected \"auto\" or a table such as { webp = 80 }") }
            for format in formats { quality.set(.auto(.defaults(for: format)), for: format) }
            return
        }
        let table = try self.table(name, node)
        var autos = Dictionary(uniqueKeysWithValues: formats.map { ($0, AutoQuality.defaults(for: $0)) })
        if let node = table["auto"] { try applyAuto("\(name).auto", node, to: &autos) }
        // Formats left as they were take the auto table's settings too (WebP is automatic by default).
        for format in formats {
            if case .auto = quality.choice(for: format), let auto = autos[format] { quality.set(.auto(auto), for: format) }
        }
        for (key, value) in Self.ordered(table) where key != "auto" {
            guard let format = ImageFormat(rawValue: key), formats.contains(format), let auto = autos[format] else {
                throw unknown("\(name).\(key)", value, known: known)
            }
            if case .string(let text) = value.value {
                guard text == "auto" else { throw fail("\(name).\(key)", value, "expected a quality from 1 to 100 or \"auto\", not \"\(text)\"") }
                quality.set(.auto(auto), for: format)
            } else {
                quality.set(.fixed(try integer("\(name).\(key)", value, in: 1...100)), for: format)
            }
        }
    }

    /// `auto = { ssim = 0.97, ssimulacra2 = 70, webp = [40, 90], avif = [50, 75], jpeg = [45, 92] }`.
    private func applyAuto(_ name: String, _ node: TOMLNode, to autos: inout [ImageFormat: AutoQuality]) throws(ConfigurationError) {
        let known = ConfigurationKey.children(of: name).map(\.short)
        for (key, value) in Self.ordered(try table(name, node)) {
            let keyName = "\(name).\(key)"
            guard known.contains(key) else { throw unknown(keyName, value, known: known) }
            switch key {
            case "ssim":
                let target: Double = switch value.value {
                case .float(let number): number
                case .integer(let number): Double(number)
                default: throw fail(keyName, value, "expected a number such as 0.97, found \(value.value.typeName)")
                }
                guard target >= 0.5, target < 1 else { throw fail(keyName, value, "must be at least 0.5 and below 1, not \(target)") }
                let ssim = min(9999, Int((target * 10_000).rounded()))
                for format in Array(autos.keys) { autos[format]?.ssim = ssim }
            case "ssimulacra2":
                // AVIF's second target; 0 searches AVIF on SSIM alone.
                let points = try integer(keyName, value, in: 0...95)
                autos[.avif]?.ssimulacra2 = points == 0 ? nil : points
            default:
                guard let format = ImageFormat(rawValue: key), autos[format] != nil else { throw unknown(keyName, value, known: known) }
                let bounds = try integers(keyName, value, in: 1...100)
                guard bounds.count == 2, bounds[0] <= bounds[1] else {
                    throw fail(keyName, value, "expected [floor, ceiling] such as [40, 90]")
                }
                autos[format]?.floor = bounds[0]
                autos[format]?.ceiling = bounds[1]
            }
        }
    }
}

extension ImageSettings.Quality {
    mutating func set(_ choice: QualityChoice, for format: ImageFormat) {
        switch format {
        case .webp: webp = choice
        case .avif: avif = choice
        case .jpeg: jpeg = choice
        case .jxl: jxl = choice
        default: break
        }
    }
}
