// swift-tools-version:6.1
import Foundation
import PackageDescription

// Layers, bottom up:
//   C system modules (pkg-config) -> CShims (fixed-arity wrappers for variadic calls and macros)
//   -> one Swift binding module per C library, the only importer of its C module
//   -> ImgBake (the library core, folders follow the data flow) -> imgbake (thin executable).

// Whether the tree a binary is built from has uncommitted changes, shown as `+dirty` after the version
// (`imgbake --version`, the report; never in a key or a fingerprint). The Makefile sets it from `git
// status` on every build; SwiftPM reads this manifest again when the variable changes, and only
// BuildStamp (one file) is compiled again. A plain `swift build` claims nothing: SwiftPM keeps a
// manifest's result until the manifest or the environment changes, so the manifest cannot look at the
// tree itself.
let buildState = ProcessInfo.processInfo.environment["IMGBAKE_BUILD_STATE"]

// How imgbake's executables link: they find the stack's libvips beside themselves in every artefact
// (bin/imgbake and lib/imgbake/libvips-*.so.42, in the tarball, the .deb and the wheel alike), else in
// .build/stack for the binaries built here (packaging/dist.sh takes that second path out of what it
// ships); and Foundation's (and libjxl's) references to hypot, hypotf, condition_variable::wait and
// __throw_bad_array_new_length go to CShims' wrappers, which keep the floor at glibc 2.34 and GCC 11's
// libstdc++ (Sources/CShims/system_shim.c).
let executableLinking: [LinkerSetting] = [.unsafeFlags([
    "-Xlinker", "-rpath", "-Xlinker", "$ORIGIN/../lib/imgbake",
    "-Xlinker", "-rpath", "-Xlinker", Context.packageDirectory + "/.build/stack/lib",
    "-Xlinker", "--wrap=hypot", "-Xlinker", "--wrap=hypotf",
    "-Xlinker", "--wrap=_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE",
    "-Xlinker", "--wrap=_ZSt28__throw_bad_array_new_lengthv",
])]

let package = Package(
    name: "imgbake",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "imgbake", targets: ["ImgBakeCLI"]),
        .library(name: "ImgBake", targets: ["ImgBake"]),
    ],
    // `imgbake serve` and SwiftNIO, on by default (every artefact, test and `make build` has it).
    // `make demo` builds without it (`--disable-default-traits`): the example needs only `imgbake
    // build`, and compiling SwiftNIO is half of a fresh clone's debug build.
    traits: [
        .trait(name: "Serve", description: "The `imgbake serve` command (SwiftNIO)."),
        .default(enabledTraits: ["Serve"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        // Markdown front matter: YAML 1.1 as libyaml reads it, with each node's line and column.
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // `imgbake serve`: the HTTP server and the upstream client (gzip: the stack's zlib, CShims.Zlib).
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // C libraries: the image stack (packaging/stack/stack.sh, docs/stack.md), in .build/stack, which
        // `make stack` makes and imgbake-stack.pc describes (the Makefile puts it on PKG_CONFIG_PATH).
        // libvips is the stack's shared library, its interface declared in Sources/CVips; the others are
        // linked in from one static archive, libimgbake-stack.a, with the headers of the Debian packages
        // whose archives it holds (curl's and nghttp2's are the stack's own).
        .systemLibrary(name: "CVips", pkgConfig: "imgbake-stack"),
        .systemLibrary(name: "CCurl", pkgConfig: "imgbake-stack"),
        .systemLibrary(name: "CGumbo", pkgConfig: "imgbake-stack", providers: [.apt(["libgumbo-dev"])]),
        .systemLibrary(name: "CCmarkGFM", pkgConfig: "imgbake-stack",
                       providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "imgbake-stack", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "imgbake-stack", providers: [.apt(["libsqlite3-dev"])]),
        // SHA-256 (blob ids, variant keys) from OpenSSL's libcrypto, which the stack's libcurl links
        // anyway; swift-crypto would compile BoringSSL (363 C files) for two hash calls.
        .systemLibrary(name: "CCrypto", pkgConfig: "imgbake-stack", providers: [.apt(["libssl-dev"])]),
        // libjxl (with highway, brotli, lcms2), built into the stack: JPEG XL, which the wheel's libvips cannot write.
        .systemLibrary(name: "CJxl", pkgConfig: "imgbake-stack"),
        .target(name: "CShims", dependencies: ["CVips", "CCurl", "CSQLite", "CJxl"]),

        // How this binary was built (see buildState above).
        .target(name: "BuildStamp", swiftSettings: buildState == "dirty" ? [.define("IMGBAKE_DIRTY")] : []),

        // Swift bindings: one owner type per C handle, errors drained at the call site.
        .target(name: "Locking"),
        .target(name: "Vips", dependencies: ["CVips", "CShims", "Locking"]),
        .target(name: "Curl", dependencies: ["CCurl", "CShims", "Locking"]),
        .target(name: "Gumbo", dependencies: ["CGumbo", "CShims"]),
        .target(name: "Jxl", dependencies: ["CJxl", "CShims"]),
        .target(name: "CommonMark", dependencies: ["CCmarkGFM", "Locking"]),
        .target(name: "Exif", dependencies: ["CExif", "CShims"]),
        .target(name: "SQLite", dependencies: ["CSQLite", "CShims"]),
        .target(name: "Digest", dependencies: ["CCrypto"]),

        // The markup templates live at the top of the repository (Templates/) and are compiled in,
        // so the binary needs no files beside it; `templates_dir` can override them at run time.
        .target(name: "ImgBakeTemplates", path: "Templates",
                exclude: ["README.md"],
                resources: [.embedInCode("picture.mustache"), .embedInCode("img.mustache"),
                            .embedInCode("img-attributes.mustache"), .embedInCode("report.mustache")]),

        .target(name: "ImgBake", dependencies: [
            "Vips", "Jxl", "Curl", "Gumbo", "CommonMark", "Exif", "SQLite", "Digest", "ImgBakeTemplates", "CShims", "Locking", "BuildStamp",
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "Yams", package: "Yams"),
        ]),
        // `imgbake serve`: a proxy in front of a generator's dev server that rewrites its pages as a build
        // would (docs/serve.md). Its own module, so the library core does not depend on SwiftNIO.
        .target(name: "ImgBakeServe", dependencies: [
            "ImgBake", "CShims",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // The CLI names the binding modules only for `imgbake --version` (the libraries' own versions).
        .executableTarget(name: "ImgBakeCLI", dependencies: [
            "ImgBake", .target(name: "ImgBakeServe", condition: .when(traits: ["Serve"])),
            "Vips", "Jxl", "Curl", "SQLite", "Gumbo", "CommonMark", "Exif",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: executableLinking),
        // Tests: fast unit tests (no network, no child processes) and end-to-end tests (a loopback origin,
        // real builds, the real binary), sharing a support library.
        .target(name: "ImgBakeTestSupport", dependencies: ["ImgBake", "CShims", "Locking", "Vips"], path: "Tests/TestSupport"),
        // The properties the fuzz targets check (Tests/Fuzz): beside the fuzz programs, out of the library;
        // the unit tests replay the committed corpus through them (FuzzSeedTests).
        .target(name: "FuzzProperties", dependencies: ["ImgBake"], path: "Tests/Fuzz/Properties"),
        .systemLibrary(name: "CWebPOracle", path: "Tests/CWebPOracle", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .testTarget(name: "ImgBakeUnitTests",
                    dependencies: ["ImgBake", "ImgBakeServe", "ImgBakeTestSupport", "FuzzProperties", "CWebPOracle", "Vips", "Gumbo", "CommonMark", "Exif", "Digest", "Curl",
                                   .product(name: "Yams", package: "Yams"), .product(name: "NIOHTTP1", package: "swift-nio"),
                                   .product(name: "NIOEmbedded", package: "swift-nio")],
                    path: "Tests/UnitTests", linkerSettings: executableLinking),
        .testTarget(name: "ImgBakeEndToEndTests",
                    dependencies: ["ImgBake", "ImgBakeTestSupport", "Vips", "Exif"],
                    path: "Tests/EndToEndTests", linkerSettings: executableLinking),
    ]
)

// libFuzzer targets (`make fuzz`, docs/FUZZING.md): `fuzz-<name>` checks `FuzzTarget.<name>`'s properties;
// Tests/Fuzz/<name>/corpus is its minimised corpus, tokens.dict its dictionary. CLibFuzzer only declares
// libFuzzer's driver, which -sanitize=fuzzer links in. Only in fuzz builds (Tests/Fuzz/fuzz.sh sets
// IMGBAKE_FUZZ): `swift build --build-tests` builds every target, and compiling and linking six more
// executables cost each `make test` several seconds. `make test` replays the seeds in-process
// (FuzzSeedTests), so the properties stay checked there.
if ProcessInfo.processInfo.environment["IMGBAKE_FUZZ"] != nil {
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),
        .target(name: "FuzzDriver", dependencies: ["FuzzProperties", "CLibFuzzer"], path: "Tests/Fuzz/Driver"),
    ]
    for name in ["srcset", "markdown-destination", "toml", "html-rewrite", "markdown-rewrite", "remote-pack"] {
        package.targets.append(.executableTarget(name: "fuzz-\(name)", dependencies: ["FuzzDriver"], path: "Tests/Fuzz/\(name)",
                                                 exclude: ["corpus", "tokens.dict"], linkerSettings: executableLinking))
    }
}
