import ArgumentParser
import Foundation
import Glibc
import ImgBake

/// `imgbake`: parse arguments, build a typed configuration, call the library, map results to exit
/// codes (0 success, 1 build failed, 2 usage or configuration error).
@main
struct ImgBakeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imgbake",
        abstract: "Localise the remote images of a static site: download once, make responsive variants, rewrite the pages.",
        version: SystemInfo.displayVersion,
        subcommands: [BuildCommand.self, ServeCommand.self, ScanCommand.self, CacheCommand.self, ConfigCommand.self],
        defaultSubcommand: BuildCommand.self)

    static func main() async {
        SystemInfo.tuneMemoryAllocator()
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
            // `--version`: the parser gives back the configured version; imgbake says more (VersionReport).
            if message == configuration.version { print(VersionReport.text) } else if !message.isEmpty { print(message) }
            Foundation.exit(0)
        }
        if !message.isEmpty { Terminal.error(message) }
        if error is ExitCode { Foundation.exit(code.rawValue) }
        Foundation.exit(code == .validationFailure || error is UsageError ? 2 : code.rawValue)
    }
}

/// A usage or configuration problem: exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// stderr with write(2), retrying when a signal interrupts it (FileHandle.write traps on that).
enum Terminal {
    static func error(_ line: String) { write(line + "\n") }

    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
