import Curl
import ImgBake
import SQLite
import Vips

/// `imgbake --version`: imgbake's version and those of the libraries it runs with, as `curl --version`
/// does, read from the libraries at run time (what is installed, not what it was compiled against), so a
/// report of a problem says which libvips made the images and whether it can write WebP and AVIF here.
///
///     imgbake 0.1.0 (x86_64 Linux)
///     libvips 8.14.1 (writes WebP: yes, AVIF: yes)
///     libwebp 1.2.4 (libvips' WebP encoder)
///     libcurl 7.88.1 (TLS: OpenSSL/3.0.15; zlib/1.2.13 brotli/1.0.9 zstd/1.5.4 libidn2/2.3.3 nghttp2/1.52.0)
///     SQLite 3.40.1
enum VersionReport {
    static var text: String {
        func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
        let webp = VipsRuntime.canEncode(.webp(quality: 80, effort: 0))
        let avif = VipsRuntime.canEncode(.avif(quality: 50, effort: 0))
        let curl = CurlVersion.current
        let curlDetail = ["TLS: " + (curl.tls ?? "none")] + (curl.libraries.isEmpty ? [] : [curl.libraries.joined(separator: " ")])
        return [
            "imgbake \(SystemInfo.displayVersion) (\(platform))",
            "libvips \(VipsRuntime.version) (writes WebP: \(yesNo(webp)), AVIF: \(yesNo(avif)))",
            "libwebp \(VipsRuntime.webpVersion ?? "not found") (libvips' WebP encoder)",
            "libcurl \(curl.version) (\(curlDetail.joined(separator: "; ")))",
            "SQLite \(Database.libraryVersion)",
        ].joined(separator: "\n")
    }

    private static var platform: String {
        #if arch(x86_64)
        let arch = "x86_64"
        #elseif arch(arm64)
        let arch = "aarch64"
        #else
        let arch = "unknown"
        #endif
        #if os(Linux)
        return arch + " Linux"
        #else
        return arch
        #endif
    }
}
