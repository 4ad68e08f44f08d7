/// What imgbake writes about an `<img>`'s size so that its box is the box it had: `width` and `height`
/// only where the page's CSS cannot make them stretch it, an `aspect-ratio` where they cannot be
/// written, and a `sizes` that keeps the image's natural width where nothing else fixes it.
///
/// Why each matters: a `width`/`height` attribute sets the box on the axis CSS leaves unset, so beside
/// a CSS `height: 100px` (Sphinx's `:height:`) or a `max-width: 100%` without `height: auto` (Jekyll's
/// minima) it pins the other axis to the image's pixels instead of its proportions; and with `srcset`
/// the browser takes an image's natural width from `sizes` (a 200 px icon with
/// `sizes="(max-width: 960px) 100vw, 960px"` and nothing else sizing it shows 960 px wide).
///
/// Every combination the page's CSS allows (`BoxSizing`: each axis unset, `auto` or set, a `min-`/`max-`
/// applying or not) is played out for each choice, best first, and the first that keeps the box in all
/// of them is taken; writing nothing with `sizes` at the natural width always does. docs/rewriting.md,
/// "Pages look the same", gives the rules in words.
struct BoxChoice: Sendable, Equatable {
    /// `width` and `height` to add (nil: not added).
    var width: Int?
    var height: Int?
    /// `sizes` must make the image's natural width its own (`<n>px`): nothing else fixes its width.
    var naturalSizes = false
    /// `aspect-ratio: auto W / H` to add to its `style` (W, H), so the box has its shape before the
    /// image arrives when the attributes cannot give it.
    var aspectRatio: (width: Int, height: Int)?
    /// The used width never depends on the natural size (a lazy image may take `sizes="auto, …"`).
    var widthIsPinned = false

    static func == (a: BoxChoice, b: BoxChoice) -> Bool {
        a.width == b.width && a.height == b.height && a.naturalSizes == b.naturalSizes
            && a.aspectRatio?.width == b.aspectRatio?.width && a.aspectRatio?.height == b.aspectRatio?.height && a.widthIsPinned == b.widthIsPinned
    }
}

enum BoxRule {
    /// - Parameters:
    ///   - box: what the page's CSS may set (`PageLayout`).
    ///   - author: the author's numeric `width`/`height` attributes; `authorWrote` whether they wrote
    ///     either at all (a `width="50%"` is theirs too, and kept).
    ///   - natural: the source's own size (upright), as the page showed it.
    ///   - canAdd: which attributes may be added at all (a selector of the page tests the others).
    ///   - style: a `style` declaration may be added (the page's policy allows it, no selector tests it).
    static func choose(_ box: BoxSizing, author: (width: Int?, height: Int?), authorWrote: (width: Bool, height: Bool),
                       natural: (width: Int, height: Int), canAdd: (width: Bool, height: Bool) = (true, true), style: Bool) -> BoxChoice {
        guard natural.width > 0, natural.height > 0 else { return BoxChoice() }
        let ratio = Double(natural.width) / Double(natural.height)
        // What imgbake's attribute would say on each axis: the author's other number in the image's
        // proportions, else the natural size.
        let width = author.height.map { Int((Double($0) * ratio).rounded()) } ?? natural.width
        let height = author.width.map { Int((Double($0) / ratio).rounded()) } ?? natural.height
        // A flex or grid item's size is its container's to give (stretch, flex-basis): no attribute.
        var options: [(Bool, Bool)] = box.item ? [(false, false)] : [(true, true), (true, false), (false, true), (false, false)]
        options = options.filter { (!$0.0 || !authorWrote.width && canAdd.width) && (!$0.1 || !authorWrote.height && canAdd.height) }
        // The other axis derived from the author's number only where the author wrote a number.
        options = options.filter { (!$0.0 || !authorWrote.height || author.height != nil) && (!$0.1 || !authorWrote.width || author.width != nil) }
        let scenarios = Self.scenarios(box)
        // One attribute CSS overrides on every screen says nothing: left out (both still give the shape).
        options = options.filter { option in
            option == (true, true) ? scenarios.contains { !$0.width.isSet || !$0.height.isSet }
                : (!option.0 || scenarios.contains { $0.width == .unset }) && (!option.1 || scenarios.contains { $0.height == .unset })
        }
        for naturalSizes in [false, true] {
            for (addWidth, addHeight) in options
            where scenarios.allSatisfy({ keepsBox($0, author: authorWrote, ours: (addWidth, addHeight), naturalSizes: naturalSizes, box: box) }) {
                var choice = BoxChoice(width: addWidth ? width : nil, height: addHeight ? height : nil, naturalSizes: naturalSizes)
                choice.widthIsPinned = scenarios.allSatisfy { !usesNaturalSize($0, author: authorWrote, ours: (addWidth, addHeight), box: box) }
                let shaped = (addWidth || authorWrote.width) && (addHeight || authorWrote.height)
                let followsShape = scenarios.contains { !$0.width.isSet || !$0.height.isSet }
                if style, !shaped, followsShape, !box.aspectRatio { choice.aspectRatio = (natural.width, natural.height) }
                return choice
            }
        }
        return BoxChoice(naturalSizes: true)
    }

    enum State: CaseIterable {
        case unset, auto
        /// A length.
        case fixed
        /// Relative to the box around it (`80%`).
        case relative

        var isSet: Bool { self == .fixed || self == .relative }
    }

    struct Scenario {
        var width: State, height: State
        var widthLimited: Bool, heightLimited: Bool
    }

    /// Every combination the CSS allows.
    static func scenarios(_ box: BoxSizing) -> [Scenario] {
        func states(_ axis: AxisSizing) -> [State] {
            let states = (axis.unset ? [State.unset] : []) + (axis.auto ? [.auto] : []) + (axis.fixed ? [.fixed] : [])
                + (axis.relative ? [.relative] : [])
            return states.isEmpty ? [.unset] : states
        }
        var result: [Scenario] = []
        for width in states(box.width) {
            for height in states(box.height) {
                for widthLimited in box.width.limited ? [false, true] : [false] {
                    for heightLimited in box.height.limited ? [false, true] : [false] {
                        result.append(Scenario(width: width, height: height, widthLimited: widthLimited, heightLimited: heightLimited))
                    }
                }
            }
        }
        return result
    }

    /// What sets an axis's size: a CSS value, the author's attribute, imgbake's, or nothing (`auto`).
    enum Driver { case css, author, ours, auto }

    static func driver(_ state: State, author: Bool, ours: Bool) -> Driver {
        switch state {
        case .fixed, .relative: .css
        case .auto: .auto
        case .unset: author ? .author : ours ? .ours : .auto
        }
    }

    /// Whether the box in `scenario` is the same with imgbake's attributes as without them. Only an axis
    /// nothing set before can change (imgbake writes no attribute the author wrote): from `auto` to
    /// imgbake's number.
    static func keepsBox(_ scenario: Scenario, author: (width: Bool, height: Bool), ours: (Bool, Bool), naturalSizes: Bool, box: BoxSizing) -> Bool {
        let cssRatio = box.aspectRatio
        let widthBefore = driver(scenario.width, author: author.width, ours: false)
        let heightBefore = driver(scenario.height, author: author.height, ours: false)
        let widthAfter = driver(scenario.width, author: author.width, ours: ours.0)
        let heightAfter = driver(scenario.height, author: author.height, ours: ours.1)
        switch (widthBefore != widthAfter, heightBefore != heightAfter) {
        case (false, false):
            // Nothing new sets it; with neither axis set, the natural size does, which `sizes` decides.
            return !usesNaturalSize(scenario, author: author, ours: ours, box: box) || naturalSizes
        case (true, true):
            // Both axes from the natural size before, pinned to it after: the same unless a min/max
            // would have scaled the image in proportion, or CSS gives another proportion.
            return !cssRatio && !scenario.widthLimited && !scenario.heightLimited
        case (true, false):
            return oneAxisPinned(other: heightAfter, limitedSelf: scenario.widthLimited, limitedOther: scenario.heightLimited, cssRatio: cssRatio)
        case (false, true):
            return oneAxisPinned(other: widthAfter, limitedSelf: scenario.heightLimited, limitedOther: scenario.widthLimited, cssRatio: cssRatio)
        }
    }

    /// One axis pinned to imgbake's number where it followed the image before.
    private static func oneAxisPinned(other: Driver, limitedSelf: Bool, limitedOther: Bool, cssRatio: Bool) -> Bool {
        switch other {
        // Derived from the proportions of an axis CSS sets to something else: stretched.
        case .css, .ours: return false
        // Derived from the author's number on the other axis: the same box unless CSS gives another
        // proportion or a min/max scales either axis.
        case .author: return !cssRatio && !limitedSelf && !limitedOther
        // The natural size before, the same number now, the other axis in proportion: the same unless
        // a min/max on the other axis would have scaled both.
        case .auto: return !limitedOther
        }
    }

    /// Whether the natural size decides the used width in `scenario`: neither axis set by anything, or
    /// only relative to a box sized by its content (which takes the image's own width for a
    /// percentage).
    static func usesNaturalSize(_ scenario: Scenario, author: (width: Bool, height: Bool), ours: (Bool, Bool), box: BoxSizing) -> Bool {
        func follows(_ state: State, _ driver: Driver) -> Bool { driver == .auto || (box.contentSized && state == .relative) }
        return follows(scenario.width, driver(scenario.width, author: author.width, ours: ours.0))
            && follows(scenario.height, driver(scenario.height, author: author.height, ours: ours.1))
    }
}
