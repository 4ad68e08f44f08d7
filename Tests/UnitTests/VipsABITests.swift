import CVips
import Testing
import Vips

/// Sources/CVips/CVips.h declares libvips' interface by hand (the stack's library ships no headers):
/// each enumeration value imgbake passes is the one the running libvips registers under that name.
@Suite struct VipsABITests {
    @Test func everyEnumerationValueIsTheLibrarys() throws {
        try VipsRuntime.start()
        let enums: [(GType, String, Int32)] = [
            (vips_band_format_get_type(), "uchar", VIPS_FORMAT_UCHAR.rawValue),
            (vips_band_format_get_type(), "char", VIPS_FORMAT_CHAR.rawValue),
            (vips_band_format_get_type(), "ushort", VIPS_FORMAT_USHORT.rawValue),
            (vips_band_format_get_type(), "short", VIPS_FORMAT_SHORT.rawValue),
            (vips_band_format_get_type(), "uint", VIPS_FORMAT_UINT.rawValue),
            (vips_band_format_get_type(), "int", VIPS_FORMAT_INT.rawValue),
            (vips_band_format_get_type(), "float", VIPS_FORMAT_FLOAT.rawValue),
            (vips_band_format_get_type(), "complex", VIPS_FORMAT_COMPLEX.rawValue),
            (vips_band_format_get_type(), "double", VIPS_FORMAT_DOUBLE.rawValue),
            (vips_band_format_get_type(), "dpcomplex", VIPS_FORMAT_DPCOMPLEX.rawValue),
            (vips_interpretation_get_type(), "multiband", Int32(VIPS_INTERPRETATION_MULTIBAND.rawValue)),
            (vips_interpretation_get_type(), "b-w", Int32(VIPS_INTERPRETATION_B_W.rawValue)),
            (vips_interpretation_get_type(), "cmyk", Int32(VIPS_INTERPRETATION_CMYK.rawValue)),
            (vips_interpretation_get_type(), "srgb", Int32(VIPS_INTERPRETATION_sRGB.rawValue)),
            (vips_interpretation_get_type(), "rgb16", Int32(VIPS_INTERPRETATION_RGB16.rawValue)),
            (vips_interpretation_get_type(), "grey16", Int32(VIPS_INTERPRETATION_GREY16.rawValue)),
            (vips_access_get_type(), "random", Int32(VIPS_ACCESS_RANDOM.rawValue)),
            (vips_access_get_type(), "sequential", Int32(VIPS_ACCESS_SEQUENTIAL.rawValue)),
            (vips_fail_on_get_type(), "none", Int32(VIPS_FAIL_ON_NONE.rawValue)),
            (vips_fail_on_get_type(), "truncated", Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)),
            (vips_fail_on_get_type(), "error", Int32(VIPS_FAIL_ON_ERROR.rawValue)),
            (vips_size_get_type(), "both", Int32(VIPS_SIZE_BOTH.rawValue)),
            (vips_size_get_type(), "up", Int32(VIPS_SIZE_UP.rawValue)),
            (vips_size_get_type(), "down", Int32(VIPS_SIZE_DOWN.rawValue)),
            (vips_kernel_get_type(), "lanczos3", Int32(VIPS_KERNEL_LANCZOS3.rawValue)),
            (vips_intent_get_type(), "relative", Int32(VIPS_INTENT_RELATIVE.rawValue)),
            (vips_operation_round_get_type(), "rint", Int32(VIPS_OPERATION_ROUND_RINT.rawValue)),
            (vips_foreign_heif_compression_get_type(), "av1", Int32(VIPS_FOREIGN_HEIF_COMPRESSION_AV1.rawValue)),
            (vips_foreign_subsample_get_type(), "auto", Int32(VIPS_FOREIGN_SUBSAMPLE_AUTO.rawValue)),
            (vips_foreign_subsample_get_type(), "off", Int32(VIPS_FOREIGN_SUBSAMPLE_OFF.rawValue)),
        ]
        for (type, nick, value) in enums {
            #expect(vips_enum_from_nick("imgbake", type, nick) == value, "\(nick)")
        }
        #expect(vips_flags_from_nick("imgbake", vips_foreign_png_filter_get_type(), "all") == Int32(VIPS_FOREIGN_PNG_FILTER_ALL.rawValue))
        #expect(VIPS_MAX_COORD == 10_000_000)
    }
}
