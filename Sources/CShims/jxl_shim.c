#include "jxl_shim.h"
#define JXL_STATIC_DEFINE 1
#include <jxl/decode.h>
#include <jxl/encode.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *imgbake_jxl_version(void) {
    static char version[32];
    if (!version[0]) {
        uint32_t v = JxlEncoderVersion();
        snprintf(version, sizeof version, "%u.%u.%u", v / 1000000, v / 1000 % 1000, v % 1000);
    }
    return version;
}

void imgbake_jxl_free(void *pointer) { free(pointer); }

static int imgbake_jxl_fail(char *error, size_t size, const char *format, ...) {
    if (error && size) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, size, format, args);
        va_end(args);
    }
    return -1;
}

int imgbake_jxl_encode(const uint8_t *pixels, int width, int height, int bands, float quality, int effort,
                       uint8_t **out, size_t *length, char *error, size_t error_size) {
    if (width < 1 || height < 1 || bands < 1 || bands > 4)
        return imgbake_jxl_fail(error, error_size, "cannot encode %dx%d pixels of %d bands", width, height, bands);
    JxlEncoder *encoder = JxlEncoderCreate(NULL);
    if (!encoder) return imgbake_jxl_fail(error, error_size, "cannot create an encoder");
    int colour = bands >= 3 ? 3 : 1, alpha = bands == 2 || bands == 4;
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = (uint32_t) width;
    info.ysize = (uint32_t) height;
    info.bits_per_sample = 8;
    info.num_color_channels = (uint32_t) colour;
    info.num_extra_channels = alpha ? 1 : 0;
    info.alpha_bits = alpha ? 8 : 0;
    info.uses_original_profile = JXL_FALSE;
    JxlColorEncoding encoding;
    JxlColorEncodingSetToSRGB(&encoding, colour == 1);
    JxlPixelFormat format = {(uint32_t) bands, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    JxlEncoderFrameSettings *settings = NULL;
    int result = -1;
    if (JxlEncoderSetBasicInfo(encoder, &info) != JXL_ENC_SUCCESS || JxlEncoderSetColorEncoding(encoder, &encoding) != JXL_ENC_SUCCESS) {
        imgbake_jxl_fail(error, error_size, "the encoder refused the image's description");
        goto done;
    }
    settings = JxlEncoderFrameSettingsCreate(encoder, NULL);
    if (!settings || JxlEncoderSetFrameDistance(settings, JxlEncoderDistanceFromQuality(quality)) != JXL_ENC_SUCCESS ||
        JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS) {
        imgbake_jxl_fail(error, error_size, "the encoder refused quality %.1f or effort %d", quality, effort);
        goto done;
    }
    if (JxlEncoderAddImageFrame(settings, &format, pixels, (size_t) width * height * bands) != JXL_ENC_SUCCESS) {
        imgbake_jxl_fail(error, error_size, "the encoder refused the pixels");
        goto done;
    }
    JxlEncoderCloseInput(encoder);
    size_t capacity = 64 * 1024 + (size_t) width * height / 2, used = 0;
    uint8_t *buffer = malloc(capacity);
    for (;;) {
        if (!buffer) { imgbake_jxl_fail(error, error_size, "out of memory"); goto done; }
        uint8_t *next = buffer + used;
        size_t available = capacity - used;
        JxlEncoderStatus status = JxlEncoderProcessOutput(encoder, &next, &available);
        used = (size_t) (next - buffer);
        if (status == JXL_ENC_SUCCESS) break;
        if (status != JXL_ENC_NEED_MORE_OUTPUT) {
            free(buffer);
            imgbake_jxl_fail(error, error_size, "encoding failed (libjxl error %d)", (int) JxlEncoderGetError(encoder));
            goto done;
        }
        capacity *= 2;
        uint8_t *grown = realloc(buffer, capacity);
        if (!grown) free(buffer);
        buffer = grown;
    }
    *out = buffer;
    *length = used;
    result = 0;
done:
    JxlEncoderDestroy(encoder);
    return result;
}

int imgbake_jxl_decode(const uint8_t *bytes, size_t length, uint8_t **pixels, int *width, int *height, int *bands,
                       char *error, size_t error_size) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) return imgbake_jxl_fail(error, error_size, "cannot create a decoder");
    int result = -1;
    uint8_t *buffer = NULL;
    JxlBasicInfo info;
    JxlPixelFormat format = {0, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, bytes, length) != JXL_DEC_SUCCESS) {
        imgbake_jxl_fail(error, error_size, "the decoder refused its input");
        goto done;
    }
    JxlDecoderCloseInput(decoder);
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            if (JxlDecoderGetBasicInfo(decoder, &info) != JXL_DEC_SUCCESS) break;
            format.num_channels = (info.num_color_channels >= 3 ? 3 : 1) + (info.alpha_bits ? 1 : 0);
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size = 0;
            if (JxlDecoderImageOutBufferSize(decoder, &format, &size) != JXL_DEC_SUCCESS || !(buffer = malloc(size ? size : 1)) ||
                JxlDecoderSetImageOutBuffer(decoder, &format, buffer, size) != JXL_DEC_SUCCESS) break;
        } else if (status == JXL_DEC_FULL_IMAGE || status == JXL_DEC_SUCCESS) {
            if (!buffer) break;
            *pixels = buffer;
            buffer = NULL;
            *width = (int) info.xsize;
            *height = (int) info.ysize;
            *bands = (int) format.num_channels;
            result = 0;
            goto done;
        } else {
            break;
        }
    }
    imgbake_jxl_fail(error, error_size, "not a JPEG XL image imgbake can read");
done:
    free(buffer);
    JxlDecoderDestroy(decoder);
    return result;
}
