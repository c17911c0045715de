// The emulator's fp16 conversions (native/cuda/standin/emu/include/cuda_fp16.h), compiled alone so
// that fp16-check.cc can compare them with CUDA's own cuda_fp16.h in another unit.
#include <cuda_fp16.h>

uint16_t ours_f2h(float f, int mode) {
  switch (mode) {
    case 0: return __half_as_ushort(__float2half_rn(f));
    case 1: return __half_as_ushort(__float2half_rz(f));
    case 2: return __half_as_ushort(__float2half_rd(f));
    default: return __half_as_ushort(__float2half_ru(f));
  }
}
uint16_t ours_f2h_plain(float f) { return __half_as_ushort(__float2half(f)); }
uint16_t ours_d2h(double d) { return __half_as_ushort(__double2half(d)); }
float ours_h2f(uint16_t u) { return __half2float(__ushort_as_half(u)); }
