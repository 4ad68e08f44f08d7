import ArgumentParser
import Foundation
import ImgBake

/// The options of every command that reads a site's configuration (`build`, `serve`), declared once.
struct ConfigurationOptions: ParsableArguments {
    @Option(help: "The configuration file (default: imgbake.toml in the site folder, if there is one; for serve, the current folder).")
    var config: String?

    @Option(name: .customLong("cache-dir"), help: "The cache folder (default: $IMGBAKE_CACHE_DIR, else cache.dir of the configuration, else $XDG_CACHE_HOME/imgbake).")
    var cacheDir: String?

    /// The site's configuration before the command's own flags: `--config`, else the site's
    /// imgbake.toml when there is one.
    func load(site: String) throws -> Configuration {
        let implicit = site + "/" + ConfigurationFile.defaultName
        return try ConfigurationLoader.load(site: site, file: config ?? (FileManager.default.fileExists(atPath: implicit) ? implicit : nil),
                                            cacheDir: cacheDir)
    }
}

/// The one way a command reads a configuration: the defaults, then the file (if any), then
/// `$IMGBAKE_CACHE_DIR`, then `--cache-dir`. The environment sits under the flag and over the file:
/// the file belongs to the site, where the cache is kept belongs to the machine (docs/cache.md). A file
/// that cannot be read or has a bad key ends the run with its file:line and exit code 2.
enum ConfigurationLoader {
    static func load(site: String, file: String?, cacheDir: String?) throws -> Configuration {
        var config = Configuration(site: site, cacheDirectory: SystemInfo.defaultCacheDirectory)
        if let file {
            do throws(ConfigurationError) { try ConfigurationFile.load(file, into: &config) } catch {
                Terminal.error(error.description)
                throw ExitCode(2)
            }
        }
        if let directory = cacheDir ?? SystemInfo.environmentCacheDirectory { config.cache.directory = directory }
        return config
    }
}
