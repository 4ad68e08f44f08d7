#define JXL_STATIC_DEFINE 1
#include <jxl/encode.h>
#include <jxl/decode.h>
#include <jxl/version.h>
