// The emulator's cuda_runtime.h: everything a kernel needs is in the prelude already.
#include "span_emu_prelude.h"
