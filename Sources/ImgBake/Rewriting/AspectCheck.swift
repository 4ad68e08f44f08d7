/// `<img width height>` against the image's real shape: a browser reserves the box the attributes
/// say, so a contradiction either shifts the layout when CSS sizes the image by one side, or stretches
/// it. More than 5 % apart is a warning.
enum AspectCheck {
    static let tolerance = 0.05

    static func check(_ element: ImageElement, image: StoredVariant, at location: SourceLocation) -> Diagnostic? {
        guard let width = element.width, let height = element.height, width > 0, height > 0,
              image.width > 0, image.height > 0 else { return nil }
        let written = Double(width) / Double(height)
        let real = Double(image.width) / Double(image.height)
        guard abs(written - real) / real > tolerance else { return nil }
        return Diagnostic(.warning, "width=\(width) height=\(height) contradict the image's shape (\(image.width)×\(image.height)): "
                          + "the page will shift or the image will be distorted; set them to the image's proportions", at: location)
    }
}
