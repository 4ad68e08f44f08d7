/// The built-in templates (Templates/*.mustache) rendered natively, for the contexts `ImageMarkup`
/// gives them: what Mustache makes of them, byte for byte (`MarkupRendererTests` compares the two), at
/// a fraction of the cost. A template replaced from `templates_dir` goes through Mustache.
enum BuiltInTemplates {
    /// Nil for a template this does not know.
    static func render(_ name: String, _ context: [String: Any]) -> String? {
        switch name {
        case "img-attributes": attributes(context)
        case "picture": picture(context)
        case "img": (context["img"] as? String) ?? ""
        default: nil
        }
    }

    /// `{{#name}} name="{{name}}"{{/name}}` for each attribute the template names, in its order.
    private static let attributeNames: [(key: String, attribute: String)] = [
        ("srcset", "srcset"), ("sizes", "sizes"), ("width", "width"), ("height", "height"), ("loading", "loading"),
        ("fetchpriority", "fetchpriority"), ("decoding", "decoding"), ("style", "style"), ("blurhash", "data-blurhash"),
    ]

    private static func attributes(_ context: [String: Any]) -> String {
        var out = ""
        for (key, attribute) in attributeNames {
            guard let value = context[key] else { continue }
            out += " " + attribute + "=\"" + escape(value) + "\""
        }
        return out
    }

    /// `<picture{{#style}} style="{{style}}"{{/style}}>{{#sources}}<source hidden type="{{type}}" srcset="{{srcset}}" sizes="{{sizes}}">{{/sources}}{{{img}}}</picture>`
    private static func picture(_ context: [String: Any]) -> String {
        var out = "<picture"
        if let style = context["style"] { out += " style=\"" + escape(style) + "\"" }
        out += ">"
        for source in (context["sources"] as? [[String: Any]]) ?? [] {
            // A name the source lacks is looked up in the enclosing context, as Mustache does.
            out += "<source hidden type=\"" + escape(source["type"] ?? context["type"])
            out += "\" srcset=\"" + escape(source["srcset"] ?? context["srcset"])
            out += "\" sizes=\"" + escape(source["sizes"] ?? context["sizes"]) + "\">"
        }
        return out + ((context["img"] as? String) ?? "") + "</picture>"
    }

    /// Mustache's escaping of `{{value}}`: `<`, `>`, `&`, `"` and `'`, as `HTMLEntities.escapeAttribute`
    /// writes them.
    private static func escape(_ value: Any?) -> String {
        guard let value else { return "" }
        return HTMLEntities.escapeAttribute(value as? String ?? String(describing: value))
    }
}
