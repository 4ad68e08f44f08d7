import CommonMark
import Curl
import Exif
import Gumbo
import ImgBake
import Jxl
import SQLite
import Vips

/// `imgbake --version`: imgbake's version and those of the libraries it runs with, as `curl --version`
/// does, so a report of a problem says which libvips made the images and whether it can write WebP and
/// AVIF here. Versions are read from the libraries at run time where they have a call that says (libvips,
/// libjxl, libcurl and its TLS, SQLite, cmark-gfm); the others as the stack recorded them when it was made
/// (packaging/stack/stack.sh: the components libvips names in itself, gumbo, libexif).
///
///     imgbake 0.3.0 (x86_64 Linux)
///     libvips 8.18.7 (writes WebP: yes, AVIF: yes; libvips-e42572c0.so.42, pyvips-binary-8.18.7-e42572c0)
///       with GLib 2.90.0, mozjpeg 5.0.0, libpng 1.6.58, libwebp, libheif with aom 3.15.1, cgif, zlib-ng 1.3.1
///     libjxl 0.11.2 (writes JPEG XL)
///     libcurl 8.14.1 (TLS: OpenSSL/3.0.19; zlib/1.2.13 nghttp2/1.64.0)
///     SQLite 3.40.1
///     cmark-gfm 0.29.0.gfm.6
///     gumbo 0.10.1
///     libexif 0.6.24
enum VersionReport {
    static var text: String {
        func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
        let webp = VipsRuntime.canEncode(.webp(quality: 80, effort: 0))
        let avif = VipsRuntime.canEncode(.avif(quality: 50, effort: 0))
        let curl = CurlVersion.current
        let curlDetail = ["TLS: " + (curl.tls ?? "none")] + (curl.libraries.isEmpty ? [] : [curl.libraries.joined(separator: " ")])
        return [
            "imgbake \(SystemInfo.displayVersion) (\(platform))",
            "libvips \(VipsRuntime.version) (writes WebP: \(yesNo(webp)), AVIF: \(yesNo(avif)); \(ImageStack.library), \(ImageStack.id))",
            "  with \(ImageStack.components)",
            "libjxl \(JpegXL.version) (writes JPEG XL)",
            "libcurl \(curl.version) (\(curlDetail.joined(separator: "; ")))",
            "SQLite \(Database.libraryVersion)",
            "cmark-gfm \(MarkdownParser.libraryVersion)",
            "gumbo \(HTMLParser.libraryVersion)",
            "libexif \(LibExif.version)",
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
