import CShims
import Foundation
import Glibc

/// A child process started with posix_spawn. Not Foundation's `Process`: its `run()` lists
/// /proc/self/fd and copies 256 bytes of every entry's name, reading past the end of a short last
/// record; when that record ends a page, the test process dies with SIGSEGV in memcpy (seen in CI,
/// and found by AddressSanitizer; fixed upstream in swift-corelibs-foundation#5472, not in 6.3.1).
package final class ChildProcess: @unchecked Sendable {
    package enum Output { case inherit, null, pipe }

    /// How the child ended.
    package struct Termination: Sendable, Equatable {
        /// The exit code, or 128 + the signal that ended it (as a shell says).
        package let status: Int32
        /// The signal that ended it, if one did.
        package let signal: Int32?
    }

    package struct SpawnError: Error, CustomStringConvertible {
        package let description: String
    }

    package let pid: pid_t
    /// The read ends of the pipes asked for (the caller reads them; closed when this value goes away).
    package let stdout: Int32?
    package let stderr: Int32?
    /// With `stdinPipe`, the write end of the child's standard input (otherwise it reads /dev/null).
    package let stdin: Int32?
    // Guarded by `lock`: the child is reaped once, by whichever call sees it end first.
    private let lock = NSLock()
    private var ended: Termination?

    /// - Parameters:
    ///   - environment: added to this process's environment (nil: inherited as it is).
    ///   - mergeStderr: stderr goes where stdout goes.
    package init(_ executable: String, _ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil,
                 stdout: Output = .inherit, stderr: Output = .inherit, mergeStderr: Bool = false, stdinPipe: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = [], childEnds: [Int32] = []
        func connect(_ output: Output, to target: Int32) throws -> Int32? {
            switch output {
            case .inherit: return nil
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                return nil
            case .pipe:
                var fds: [Int32] = [0, 0]
                guard imgbake_pipe_cloexec(&fds) == 0 else { throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))") }
                posix_spawn_file_actions_adddup2(&actions, fds[1], target) // dup2 clears close-on-exec
                parentEnds.append(fds[0])
                childEnds.append(fds[1])
                return fds[0]
            }
        }
        var input: Int32?
        if stdinPipe {
            var fds: [Int32] = [0, 0]
            guard imgbake_pipe_cloexec(&fds) == 0 else { throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))") }
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
            parentEnds.append(fds[1])
            childEnds.append(fds[0])
            input = fds[1]
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        let out = try connect(stdout, to: 1)
        let err: Int32?
        if mergeStderr {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            err = nil
        } else {
            err = try connect(stderr, to: 2)
        }
        if let directory { imgbake_spawn_addchdir(&actions, directory) }

        let variables = environment.map { ProcessInfo.processInfo.environment.merging($0) { $1 } } ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, envp)
        childEnds.forEach { close($0) }
        guard code == 0 else {
            parentEnds.forEach { close($0) }
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        pid = child
        self.stdout = out
        self.stderr = err
        self.stdin = input
    }

    deinit {
        [stdout, stderr, stdin].compactMap { $0 }.forEach { close($0) }
    }

    /// Blocks until the child ends (call it from a thread that may block, or use `termination()`).
    package func wait() -> Termination {
        reap(options: 0)!
    }

    /// Waits on a thread of its own, not a cooperative one.
    package func termination() async -> Termination {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait()) }
        }
    }

    package var isRunning: Bool { reap(options: WNOHANG) == nil }

    package func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if ended == nil { kill(pid, signal) }
    }

    /// Asks the child to end (SIGTERM) and has it waited for on a thread of its own, so no ended
    /// child is left unreaped (a zombie holding its process slot until the tests end) and no
    /// cooperative thread blocks; one still running after `grace` is killed (SIGKILL).
    package func terminate(grace: Double = 5) {
        send(SIGTERM)
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(grace)
            while self.isRunning, Date() < deadline { usleep(20_000) }
            self.send(SIGKILL)
            _ = self.wait()
        }
    }

    private func reap(options: Int32) -> Termination? {
        lock.lock()
        defer { lock.unlock() }
        if let ended { return ended }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, options) } while result < 0 && errno == EINTR
        guard result == pid else { return nil }
        let signal = status & 0x7F
        ended = signal == 0 ? Termination(status: (status >> 8) & 0xFF, signal: nil) : Termination(status: 128 + signal, signal: signal)
        return ended
    }
}
