// The image stack this build links and ships, as packaging/stack/stack.sh recorded it in
// imgbake_stack.h (string macros, which Swift imports as constants).
#ifndef IMGBAKE_STACK_SHIM_H
#define IMGBAKE_STACK_SHIM_H
#include <imgbake_stack.h>
#endif
