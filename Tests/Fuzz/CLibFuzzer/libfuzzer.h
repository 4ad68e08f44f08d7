// libFuzzer's driver (compiler-rt/lib/fuzzer/FuzzerInterface.h), linked in by -sanitize=fuzzer only:
// fuzz programs call it solely when built with IMGBAKE_FUZZING (make fuzz).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
