// The emulator's bf16 conversions (native/cuda/standin/emu/include/cuda_bf16.h), compiled
// alone so that bf16-check.cc can compare them with CUDA's own header in another unit.
#include <cuda_bf16.h>

uint16_t ours_f2bf(float f) { return __bfloat16_as_ushort(__float2bfloat16(f)); }
uint16_t ours_f2bf_rz(float f) { return __bfloat16_as_ushort(__float2bfloat16_rz(f)); }
uint16_t ours_d2bf(double d) { return __bfloat16_as_ushort(__double2bfloat16(d)); }
float ours_bf2f(uint16_t u) { return __bfloat162float(__ushort_as_bfloat16(u)); }
