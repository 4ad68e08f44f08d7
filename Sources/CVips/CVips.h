/* The part of libvips' and GLib's C interface imgbake calls, declared here against libvips 8's ABI
 * (soname libvips.so.42), which every 8.x release keeps.
 *
 * Declared rather than included: the stack's libvips (packaging/stack/stack.sh, docs/stack.md) is a
 * prebuilt library that carries its own GLib and ships no headers, and the system's libvips and GLib
 * headers would bring the system's libraries with them (linking the system's GLib beside the one
 * libvips carries crashes at start). Images are opaque here: fields are read through libvips'
 * accessors. The enumeration values below are the library's own; `VipsABITests` checks each against
 * the names libvips registers for it at run time, so a mistake here fails a test instead of a build.
 */
#ifndef IMGBAKE_CVIPS_H
#define IMGBAKE_CVIPS_H
#include <stddef.h>

/* GLib */
typedef int gint;
typedef unsigned int guint;
typedef gint gboolean;
typedef char gchar;
typedef void *gpointer;
typedef size_t gsize;
typedef gsize GType;
#ifndef TRUE
#define TRUE 1
#define FALSE 0
#endif
typedef enum {
    G_LOG_LEVEL_ERROR = 1 << 2,
    G_LOG_LEVEL_CRITICAL = 1 << 3,
    G_LOG_LEVEL_WARNING = 1 << 4,
    G_LOG_LEVEL_MESSAGE = 1 << 5,
    G_LOG_LEVEL_INFO = 1 << 6,
    G_LOG_LEVEL_DEBUG = 1 << 7,
} GLogLevelFlags;
typedef void (*GLogFunc)(const gchar *log_domain, GLogLevelFlags log_level, const gchar *message, gpointer user_data);

void g_free(gpointer mem);
gpointer g_malloc(gsize n_bytes);
gpointer g_malloc0(gsize n_bytes);
gpointer g_try_malloc(gsize n_bytes);
void g_strfreev(gchar **str_array);
gpointer g_object_ref(gpointer object);
void g_object_unref(gpointer object);
guint g_log_set_handler(const gchar *log_domain, GLogLevelFlags log_levels, GLogFunc log_func, gpointer user_data);

/* libvips: opaque objects */
typedef struct _VipsImage VipsImage;
typedef struct _VipsObject VipsObject;

/* Enumerations (values as libvips registers them; nicks in the comments, checked by VipsABITests). */
typedef enum {
    VIPS_FORMAT_NOTSET = -1,
    VIPS_FORMAT_UCHAR = 0,   /* uchar */
    VIPS_FORMAT_CHAR = 1,    /* char */
    VIPS_FORMAT_USHORT = 2,  /* ushort */
    VIPS_FORMAT_SHORT = 3,   /* short */
    VIPS_FORMAT_UINT = 4,    /* uint */
    VIPS_FORMAT_INT = 5,     /* int */
    VIPS_FORMAT_FLOAT = 6,   /* float */
    VIPS_FORMAT_COMPLEX = 7, /* complex */
    VIPS_FORMAT_DOUBLE = 8,  /* double */
    VIPS_FORMAT_DPCOMPLEX = 9, /* dpcomplex */
} VipsBandFormat;
typedef enum {
    VIPS_INTERPRETATION_MULTIBAND = 0,  /* multiband */
    VIPS_INTERPRETATION_B_W = 1,        /* b-w */
    VIPS_INTERPRETATION_CMYK = 15,      /* cmyk */
    VIPS_INTERPRETATION_sRGB = 22,      /* srgb */
    VIPS_INTERPRETATION_RGB16 = 25,     /* rgb16 */
    VIPS_INTERPRETATION_GREY16 = 26,    /* grey16 */
} VipsInterpretation;
typedef enum { VIPS_ACCESS_RANDOM = 0, VIPS_ACCESS_SEQUENTIAL = 1 } VipsAccess;          /* random, sequential */
typedef enum { VIPS_FAIL_ON_NONE = 0, VIPS_FAIL_ON_TRUNCATED = 1, VIPS_FAIL_ON_ERROR = 2 } VipsFailOn; /* none, truncated, error */
typedef enum { VIPS_SIZE_BOTH = 0, VIPS_SIZE_UP = 1, VIPS_SIZE_DOWN = 2 } VipsSize;      /* both, up, down */
typedef enum { VIPS_KERNEL_LANCZOS3 = 5 } VipsKernel;                                     /* lanczos3 */
typedef enum { VIPS_INTENT_RELATIVE = 1 } VipsIntent;                                     /* relative */
typedef enum { VIPS_OPERATION_ROUND_RINT = 0 } VipsOperationRound;                       /* rint */
typedef enum { VIPS_FOREIGN_PNG_FILTER_ALL = 0xF8 } VipsForeignPngFilter;                 /* flags: all */
typedef enum { VIPS_FOREIGN_HEIF_COMPRESSION_AV1 = 4 } VipsForeignHeifCompression;       /* av1 */
typedef enum { VIPS_FOREIGN_SUBSAMPLE_AUTO = 0, VIPS_FOREIGN_SUBSAMPLE_OFF = 2 } VipsForeignSubsample; /* auto, off */

#define VIPS_MAX_COORD 10000000

/* Their types, for VipsABITests. */
GType vips_band_format_get_type(void);
GType vips_interpretation_get_type(void);
GType vips_access_get_type(void);
GType vips_fail_on_get_type(void);
GType vips_size_get_type(void);
GType vips_kernel_get_type(void);
GType vips_foreign_subsample_get_type(void);
GType vips_intent_get_type(void);
GType vips_operation_round_get_type(void);
GType vips_foreign_png_filter_get_type(void);
GType vips_foreign_heif_compression_get_type(void);
int vips_enum_from_nick(const char *domain, GType type, const char *str);
int vips_flags_from_nick(const char *domain, GType type, const char *nick);

/* The library */
int vips_init(const char *argv0);
int vips_version(int flag);
const char *vips_version_string(void);
void vips_shutdown(void);
void vips_error(const char *domain, const char *fmt, ...);
const char *vips_error_buffer(void);
char *vips_error_buffer_copy(void);
void vips_error_clear(void);
void vips_cache_set_max(int max);
void vips_cache_set_max_mem(size_t max_mem);
void vips_concurrency_set(int concurrency);
void vips_operation_block_set(const char *name, gboolean state);
gboolean vips_isprefix(const char *a, const char *b);
VipsObject **vips_object_local_array(VipsObject *parent, int n);

/* Images */
VipsImage *vips_image_new(void);
VipsImage *vips_image_new_from_buffer(const void *buf, size_t len, const char *option_string, ...);
const char *vips_foreign_find_load_buffer(const void *data, size_t size);
void *vips_image_write_to_memory(VipsImage *in, size_t *size);
VipsImage *vips_image_copy_memory(VipsImage *image);
int vips_image_get_width(const VipsImage *image);
int vips_image_get_height(const VipsImage *image);
int vips_image_get_bands(const VipsImage *image);
VipsBandFormat vips_image_get_format(const VipsImage *image);
VipsInterpretation vips_image_get_interpretation(const VipsImage *image);
int vips_image_get_n_pages(VipsImage *image);
int vips_image_get_page_height(VipsImage *image);
gboolean vips_image_hasalpha(VipsImage *image);
GType vips_image_get_typeof(const VipsImage *image, const char *name);
int vips_image_get_int(const VipsImage *image, const char *name, int *out);
int vips_image_get_string(const VipsImage *image, const char *name, const char **out);
int vips_image_get_blob(const VipsImage *image, const char *name, const void **data, size_t *length);
void vips_image_set_blob_copy(VipsImage *image, const char *name, const void *data, size_t length);
gboolean vips_image_remove(VipsImage *image, const char *name);
gchar **vips_image_get_fields(VipsImage *image);

/* Operations (each ends its optional arguments with NULL) */
int vips_thumbnail_buffer(void *buf, size_t len, VipsImage **out, int width, ...);
int vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, ...);
int vips_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, ...);
int vips_autorot(VipsImage *in, VipsImage **out, ...);
int vips_resize(VipsImage *in, VipsImage **out, double scale, ...);
int vips_premultiply(VipsImage *in, VipsImage **out, ...);
int vips_unpremultiply(VipsImage *in, VipsImage **out, ...);
int vips_round(VipsImage *in, VipsImage **out, VipsOperationRound round, ...);
int vips_cast(VipsImage *in, VipsImage **out, VipsBandFormat format, ...);
int vips_cast_uchar(VipsImage *in, VipsImage **out, ...);
int vips_copy(VipsImage *in, VipsImage **out, ...);
int vips_colourspace(VipsImage *in, VipsImage **out, VipsInterpretation space, ...);
int vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height, ...);
int vips_extract_band(VipsImage *in, VipsImage **out, int band, ...);
int vips_min(VipsImage *in, double *out, ...);
int vips_equal_const1(VipsImage *in, VipsImage **out, double c, ...);
int vips_black(VipsImage **out, int width, int height, ...);
int vips_ifthenelse(VipsImage *cond, VipsImage *in1, VipsImage *in2, VipsImage **out, ...);
int vips_gaussblur(VipsImage *in, VipsImage **out, double sigma, ...);
int vips_arrayjoin(VipsImage **in, VipsImage **out, int n, ...);
int vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_gifsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_heifsave_buffer(VipsImage *in, void **buf, size_t *len, ...);

#endif
