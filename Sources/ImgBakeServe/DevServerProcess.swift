import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A generator's dev server started by `imgbake serve -- COMMAND`: in a process group of its own (so
/// that stopping it stops whatever it started, and the terminal's Ctrl-C reaches imgbake, which stops
/// it), its output the terminal's. Its input is /dev/null: a process group in the background that read
/// the terminal would be stopped (SIGTTIN), and with it the site.
public final class DevServerProcess: Sendable {
    public let pid: pid_t

    public init(_ command: [String]) throws {
        guard let program = command.first else { throw ServeError("serve -- COMMAND: no command given") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group; no signal blocked and the stopping ones at their defaults, whatever imgbake
        // inherited (a shell's `&` ignores SIGINT, a test runner may block SIGTERM).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t(), stopping = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        sigemptyset(&stopping)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&stopping, signal) }
        posix_spawnattr_setsigdefault(&attributes, &stopping)
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, program, &actions, &attributes, arguments, environ)
        guard status == 0 else { throw ServeError("cannot start \(program): \(String(cString: strerror(status)))") }
        pid = child
    }

    /// Waits for the dev server to end, and gives its exit status (128 + the signal that ended it).
    public func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [pid] in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                let signal = status & 0x7f
                continuation.resume(returning: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
            }
        }
    }

    /// Stops the dev server and everything it started as Ctrl-C in a terminal would (SIGINT to its
    /// group), then SIGTERM after `grace`, then SIGKILL.
    public func stop(grace: Duration = .seconds(3)) async {
        for signal in [SIGINT, SIGTERM] {
            kill(-pid, signal)
            let deadline = ContinuousClock.now + grace
            while ContinuousClock.now < deadline {
                // Signal 0: the group still has a member.
                if kill(-pid, 0) != 0 { return }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        kill(-pid, SIGKILL)
    }
}

/// The dev server's port, from its command (`--port N`, `-p N`, `--port=N`, `-a HOST:PORT`,
/// `--dev-addr`, `--bind HOST:PORT`), else its generator's default: Hugo 1313, MkDocs 8000, Jekyll
/// 4000, Eleventy 8080, Zola 1111, Astro 4321, Sphinx (sphinx-autobuild) 8000.
public enum DevServerPort {
    public static func of(_ command: [String]) -> Int? {
        let programs = command.prefix(3).map { ($0 as NSString).lastPathComponent.lowercased() }
        let jekyll = programs.contains("jekyll")
        for (index, argument) in command.enumerated() {
            let next = index + 1 < command.count ? command[index + 1] : nil
            // Jekyll's `-p` is its plugins folder; its port is `-P`.
            for flag in ["--port", jekyll ? "-P" : "-p"] {
                if argument == flag, let next, let port = Int(next) { return port }
                if argument.hasPrefix(flag + "="), let port = Int(argument.dropFirst(flag.count + 1)) { return port }
            }
            for flag in ["-a", "--dev-addr", "--bind", "--interface"] {
                let value = argument == flag ? next : argument.hasPrefix(flag + "=") ? String(argument.dropFirst(flag.count + 1)) : nil
                // HOST:PORT or [IPV6]:PORT; an address alone (`::1`) names no port.
                guard let value, let colon = value.lastIndex(of: ":"), !value.hasPrefix(":") || value.hasPrefix("["),
                      value.filter({ $0 == ":" }).count == 1 || value.hasPrefix("["),
                      let port = Int(value[value.index(after: colon)...]) else { continue }
                return port
            }
        }
        let defaults: [(String, Int)] = [("hugo", 1313), ("mkdocs", 8000), ("jekyll", 4000), ("eleventy", 8080), ("@11ty/eleventy", 8080),
                                         ("zola", 1111), ("astro", 4321), ("sphinx-autobuild", 8000)]
        return defaults.first { name, _ in programs.contains(name) }?.1
    }
}

public struct ServeError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
