import ArgumentParser
import Foundation
import ImgBake

/// `imgbake`: parse arguments, build a typed configuration, call the library, map results to exit
/// codes (0 success, 1 build failed, 2 usage or configuration error).
@main
struct ImgBakeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imgbake",
        abstract: "Localise the remote images of a static site: download once, make responsive variants, rewrite the pages.",
        version: SystemInfo.version,
        subcommands: [BuildCommand.self, ScanCommand.self, CacheCommand.self],
        defaultSubcommand: BuildCommand.self)

    static func main() async {
        SystemInfo.limitMemoryArenas()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(with: error)
        }
    }

    /// ArgumentParser's usage errors exit with 64; imgbake's contract says 2.
    static func exit(with error: Error) -> Never {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        if code == .success {
            if !message.isEmpty { print(message) }
            Foundation.exit(0)
        }
        if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
        if error is ExitCode { Foundation.exit(code.rawValue) }
        Foundation.exit(code == .validationFailure || error is UsageError ? 2 : code.rawValue)
    }
}

/// A usage or configuration problem: exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Terminal {
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
