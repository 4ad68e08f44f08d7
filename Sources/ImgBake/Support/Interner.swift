/// One copy of each string among many values that repeat them (the image names and keys of a large
/// site's page states: a few hundred distinct among millions).
struct Interner {
    private var strings: Set<String> = []

    mutating func intern(_ string: String) -> String { strings.insert(string).memberAfterInsert }
}
