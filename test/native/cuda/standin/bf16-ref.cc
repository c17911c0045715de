// CUDA's own __float2bfloat16 (cuda_bf16.h's host code: the software path the GPU's
// cvt.rn.bf16.f32 agrees with) over float bit patterns: reads little-endian uint32s on stdin,
// writes one uint16 each on stdout. The reference of test/core/engine/cuda/bf16.test.ts for
// native/cuda/kernels/cast_bf16.cu; built with g++ -I$CUDA_HOME/include where a toolkit is installed.
#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

int main() {
  uint32_t u;
  while (fread(&u, 4, 1, stdin) == 1) {
    float f;
    memcpy(&f, &u, 4);
    __nv_bfloat16 b = __float2bfloat16(f);
    uint16_t h;
    memcpy(&h, &b, 2);
    fwrite(&h, 2, 1, stdout);
  }
  return 0;
}
