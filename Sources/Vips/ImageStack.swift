import CShims.Stack

/// The build of libvips this binary links and ships (packaging/stack/stack.sh): which library makes the
/// pixels, so that variant keys, `--version` and reports can name it.
public enum ImageStack {
    /// e.g. "pyvips-binary-8.18.7-e42572c0": the wheel the library comes from and the build id in its
    /// file name. Two builds with the same id make the same bytes from the same source and settings.
    public static let id: String = IMGBAKE_STACK_ID
    /// The library's file name, e.g. "libvips-e42572c0.so.42" (beside the binary in lib/imgbake/).
    public static let library: String = IMGBAKE_STACK_VIPS_LIBRARY
    /// The libraries built into it, with the versions it names itself ("GLib 2.90.0, mozjpeg 5.0.0, …").
    public static let components: String = IMGBAKE_STACK_VIPS_COMPONENTS
}
