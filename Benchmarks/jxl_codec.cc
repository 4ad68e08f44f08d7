// jxl_codec: the JPEG XL encoder and decoder for Benchmarks/formats.py (and for decoding imgbake's
// .jxl files in Benchmarks/avif_quality.py). Not part of imgbake: libvips 8.18 from pyvips-binary has no
// jxlsave or jxlload, so those scripts build this against libjxl's public API from the project's own
// stack (.build/stack: include/jxl and lib/libimgbake-stack.a, which holds libjxl 0.11 and what it
// needs) and call it on raw 8-bit pixels (1-4 bands, interleaved, rows top to bottom: what pyvips'
// write_to_memory gives).
//
//   jxl_codec enc IN.raw W H BANDS QUALITY|dDISTANCE EFFORT OUT.jxl   -> "bytes cpu_seconds distance"
//   jxl_codec dec IN.jxl OUT.raw                                      -> "W H BANDS cpu_seconds"
//
// enc: libjxl's lossy (VarDCT, XYB) encode of sRGB pixels at a quality (libjxl's scale:
// JxlEncoderDistanceFromQuality, what cjxl -q uses) or a distance, at an effort (1-10), on this thread
// alone (no parallel runner, so the CPU time is the work); alpha at libjxl's defaults. dec: the decode
// back to the pixels' own bands, 8 bits, in the colour space they were encoded in (sRGB). Both print
// the CPU time of the codec call only (CLOCK_PROCESS_CPUTIME_ID), without the file I/O.
// (SSIMULACRA2 is PyPI's ssimulacra2 package now, Benchmarks/ss2.py, as in the bench.)
//
// Build (formats.py and avif_quality.py do this themselves when the binary is missing or older than
// this file; `make stack` makes .build/stack):
//   S=.build/stack
//   g++ -O2 -std=c++17 -DJXL_STATIC_DEFINE -I$S/include Benchmarks/jxl_codec.cc -L$S/lib -limgbake-stack -lstdc++ -lm -pthread -o jxl_codec
#include <jxl/decode.h>
#include <jxl/encode.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

[[noreturn]] void Die(const char* message) {
  fprintf(stderr, "jxl_codec: %s\n", message);
  exit(1);
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::vector<uint8_t> ReadAll(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) Die("cannot open input");
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  fclose(f);
  return data;
}

void WriteAll(const char* path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) Die("cannot write output");
}

int Encode(int argc, char** argv) {
  if (argc != 9) Die("usage: enc IN.raw W H BANDS QUALITY|dDISTANCE EFFORT OUT.jxl");
  const uint32_t w = atoi(argv[3]), h = atoi(argv[4]), bands = atoi(argv[5]);
  const int effort = atoi(argv[7]);
  if (w < 1 || h < 1 || bands < 1 || bands > 4) Die("bad size or bands");
  std::vector<uint8_t> px = ReadAll(argv[2]);
  if (px.size() != (size_t)w * h * bands) Die("input is not W * H * BANDS bytes");
  const float distance = argv[6][0] == 'd' ? (float)atof(argv[6] + 1) : JxlEncoderDistanceFromQuality((float)atof(argv[6]));
  const bool alpha = bands == 2 || bands == 4, grey = bands <= 2;

  const double t0 = CpuSeconds();
  JxlEncoder* enc = JxlEncoderCreate(nullptr);
  if (!enc) Die("JxlEncoderCreate");
  JxlBasicInfo info;
  JxlEncoderInitBasicInfo(&info);
  info.xsize = w;
  info.ysize = h;
  info.bits_per_sample = 8;
  info.exponent_bits_per_sample = 0;
  info.num_color_channels = grey ? 1 : 3;
  info.alpha_bits = alpha ? 8 : 0;
  info.num_extra_channels = alpha ? 1 : 0;
  info.uses_original_profile = JXL_FALSE;  // lossy: XYB
  if (JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS) Die("JxlEncoderSetBasicInfo");
  JxlColorEncoding ce;
  JxlColorEncodingSetToSRGB(&ce, grey ? JXL_TRUE : JXL_FALSE);
  if (JxlEncoderSetColorEncoding(enc, &ce) != JXL_ENC_SUCCESS) Die("JxlEncoderSetColorEncoding");
  JxlEncoderFrameSettings* fs = JxlEncoderFrameSettingsCreate(enc, nullptr);
  if (JxlEncoderSetFrameDistance(fs, distance) != JXL_ENC_SUCCESS) Die("JxlEncoderSetFrameDistance");
  if (JxlEncoderFrameSettingsSetOption(fs, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS) Die("effort");
  JxlPixelFormat fmt = {bands, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
  if (JxlEncoderAddImageFrame(fs, &fmt, px.data(), px.size()) != JXL_ENC_SUCCESS) Die("JxlEncoderAddImageFrame");
  JxlEncoderCloseInput(enc);
  std::vector<uint8_t> out(1 << 16);
  size_t used = 0;
  for (;;) {
    uint8_t* next = out.data() + used;
    size_t avail = out.size() - used;
    JxlEncoderStatus s = JxlEncoderProcessOutput(enc, &next, &avail);
    used = next - out.data();
    if (s == JXL_ENC_SUCCESS) break;
    if (s != JXL_ENC_NEED_MORE_OUTPUT) {
      fprintf(stderr, "jxl_codec: JxlEncoderProcessOutput failed (error %d)\n", (int)JxlEncoderGetError(enc));
      exit(1);
    }
    out.resize(out.size() * 2);
  }
  JxlEncoderDestroy(enc);
  const double t1 = CpuSeconds();

  WriteAll(argv[8], out.data(), used);
  printf("%zu %.6f %.4f\n", used, t1 - t0, distance);
  return 0;
}

int Decode(int argc, char** argv) {
  if (argc != 4) Die("usage: dec IN.jxl OUT.raw");
  std::vector<uint8_t> data = ReadAll(argv[2]);
  const double t0 = CpuSeconds();
  JxlDecoder* dec = JxlDecoderCreate(nullptr);
  if (!dec) Die("JxlDecoderCreate");
  if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS) Die("subscribe");
  JxlDecoderSetInput(dec, data.data(), data.size());
  JxlDecoderCloseInput(dec);
  JxlBasicInfo info;
  JxlPixelFormat fmt = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
  std::vector<uint8_t> px;
  for (;;) {
    JxlDecoderStatus s = JxlDecoderProcessInput(dec);
    if (s == JXL_DEC_BASIC_INFO) {
      if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS) Die("basic info");
      fmt.num_channels = info.num_color_channels + (info.alpha_bits ? 1 : 0);
    } else if (s == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
      size_t size;
      if (JxlDecoderImageOutBufferSize(dec, &fmt, &size) != JXL_DEC_SUCCESS) Die("buffer size");
      px.resize(size);
      if (JxlDecoderSetImageOutBuffer(dec, &fmt, px.data(), size) != JXL_DEC_SUCCESS) Die("out buffer");
    } else if (s == JXL_DEC_FULL_IMAGE) {
      continue;
    } else if (s == JXL_DEC_SUCCESS) {
      break;
    } else {
      Die("decode failed");
    }
  }
  JxlDecoderDestroy(dec);
  const double t1 = CpuSeconds();
  WriteAll(argv[3], px.data(), px.size());
  printf("%u %u %u %.6f\n", info.xsize, info.ysize, fmt.num_channels, t1 - t0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && !strcmp(argv[1], "enc")) return Encode(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "dec")) return Decode(argc, argv);
  Die("usage: jxl_codec enc|dec ... (see the top of jxl_codec.cc)");
}
