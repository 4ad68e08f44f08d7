import Foundation
import ImgBake

/// Shows a build's progress on stderr: one live line on a terminal, plain lines every few seconds
/// without one (or with `CI=true`), nothing with `--quiet`.
final class ProgressDisplay: Sendable {
    enum Style { case live, plain, none }

    private let style: Style
    private let progress: BuildProgress
    private let task: Task<Void, Never>?

    init(_ progress: BuildProgress, quiet: Bool) {
        self.progress = progress
        let ci = ["true", "1"].contains(ProcessInfo.processInfo.environment["CI"]?.lowercased() ?? "")
        style = quiet ? .none : (isatty(STDERR_FILENO) == 1 && !ci ? .live : .plain)
        let interval: Duration = style == .live ? .milliseconds(150) : .seconds(5)
        let style = self.style
        task = style == .none ? nil : Task.detached {
            var last = ""
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                let snapshot = progress.snapshot
                guard !snapshot.finished else { break }
                let line = snapshot.line
                if style == .live {
                    Terminal.write("\r\u{1B}[K\(line)")
                } else if line != last {
                    Terminal.write("imgbake: \(line)\n")
                }
                last = line
            }
        }
    }

    /// Stops and clears the live line (warnings and the summary follow on clean lines).
    func stop() {
        task?.cancel()
        if style == .live { Terminal.write("\r\u{1B}[K") }
    }

}
