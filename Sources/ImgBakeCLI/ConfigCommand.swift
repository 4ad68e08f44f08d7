import ArgumentParser
import Foundation
import ImgBake

/// `imgbake config keys`: every key `imgbake.toml` takes, from the table the reader uses
/// (`ConfigurationKey.all`). `make docs` writes the configuration reference from its `--json`.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Describe imgbake.toml.",
        subcommands: [Keys.self])

    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keys",
            abstract: "List every key of imgbake.toml with its type, default and meaning.")

        @Flag(help: "Print JSON: an array of {name, type, default, default_note, example, summary}.")
        var json = false

        func run() throws {
            let keys = ConfigurationKey.all
            guard !json else {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(keys), as: UTF8.self))
                return
            }
            for key in keys {
                let fallback = key.defaultValue.isEmpty ? key.defaultNote : key.defaultValue
                print("\(key.name) = \(key.type)" + (fallback.isEmpty ? "" : "  (default: \(fallback))"))
                print("    \(key.summary)")
            }
        }
    }
}
