/// Whether an `<img>` imgbake gives markup goes into a `<picture>` of imgbake's or stays where it is
/// with a `srcset`: `output.markup`, unless the element says (`data-imgbake-markup`); with `"auto"` (the
/// default), a `<picture>` only where its page shows nothing would see it (`ImageLayout.wrapper`).
enum MarkupChoice {
    static func wraps(_ mode: MarkupMode, element: ImageElement?, layout: ImageLayout) -> Bool {
        switch element?.markupOverride {
        case "picture": return true
        case "img": return false
        default: break
        }
        switch mode {
        case .picture: return true
        case .auto: return layout.wrapperIsSafe
        case .img, .localize: return false
        }
    }

    /// The formats an `<img>` left without a `<picture>` can take in its `srcset`: WebP (every browser
    /// since 2020) and the source's own; AVIF and JPEG XL need a `<source type>` to fall back from.
    static func unwrapped(_ request: VariantRequest) -> VariantRequest {
        request.only([.webp, .original])
    }
}
