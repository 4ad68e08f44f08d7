/// Whether a script may move a page's images or find them by their place, so that a `<picture>`
/// wrapper would change what it does (a gallery script that groups the figures it wraps around images
/// that are siblings; a lightbox that wraps each image in a link; a lazy loader that sets `src`, which
/// a `<source>` would override), and what sizes them there is not known. Read from the script's words,
/// not run: a script that names images (`img`, `naturalWidth`, `document.images`) and walks, changes
/// or queries the tree (`parentNode`, `insertBefore`, `querySelectorAll`, jQuery) may; one that does
/// not name images (a theme switch, a code block's copy button, an analytics beacon, markup in a
/// string) does not. Erring towards "may" costs a wrapper and responsive sizes, not a page.
enum ScriptCheck {
    /// Words that walk or change the element tree.
    static let treeWords: Set<String> = [
        "insertBefore", "appendChild", "replaceChild", "replaceWith", "replaceChildren", "insertAdjacentElement",
        "insertAdjacentHTML", "parentNode", "parentElement", "previousElementSibling", "nextElementSibling",
        "previousSibling", "nextSibling", "childNodes", "children", "firstElementChild", "lastElementChild", "firstChild",
        "lastChild", "closest", "outerHTML", "wrap", "wrapAll", "wrapInner", "unwrap", "prepend", "prependTo", "appendTo",
        "insertAfter", "siblings", "jQuery", "moveBefore",
    ]
    /// Words that find elements in the document.
    static let queryWords: Set<String> = [
        "querySelector", "querySelectorAll", "getElementsByTagName", "getElementsByClassName", "getElementById",
        "getElementsByName", "elementFromPoint", "elementsFromPoint", "images",
    ]
    /// Words that name images.
    static let imageWords: Set<String> = ["img", "IMG", "Img", "images", "naturalWidth", "naturalHeight", "currentSrc", "srcset", "HTMLImageElement"]

    /// `namesImages`: the script is an image's own event handler (`this` is the image).
    static func mayRestructureImages(_ text: some Collection<UInt8>, namesImages: Bool = false) -> Bool {
        var touches = false, images = namesImages
        var word: [UInt8] = []
        /// The word just read, and the byte after it.
        func close(before next: UInt8?) -> Bool {
            defer { word.removeAll(keepingCapacity: true) }
            guard !word.isEmpty else { return false }
            // jQuery's `$(…)` (not a template literal's `${…}`).
            if word == [UInt8(ascii: "$")] {
                if next == UInt8(ascii: "(") { touches = true }
                return touches && images
            }
            let name = String(decoding: word, as: UTF8.self)
            if treeWords.contains(name) || queryWords.contains(name) { touches = true }
            if imageWords.contains(name) { images = true }
            return touches && images
        }
        for byte in text {
            let isWordByte = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte.isASCIIDigit
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
            if isWordByte {
                if word.count < 64 { word.append(byte) }
            } else if close(before: byte) {
                return true
            }
        }
        return close(before: nil)
    }
}
