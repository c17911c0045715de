// fp32 → bf16 conversion of matrix-product operands and the CPU's bf16 capability.
#pragma once
#include <cstddef>
#include <cstdint>

namespace span {

/**
 * out[i] = the bf16 bits of round_bf16(x[i]) (gemm.h: round to nearest, ties to even, every NaN to
 * the canonical 0x7fff, subnormals kept), bit for bit. Vectorised: avx512_bf16's vcvtne2ps2bf16
 * where the CPU has it (with the integer path for blocks holding a NaN or a subnormal, which that
 * instruction canonicalises differently and flushes to zero), AVX-512F integer rounding elsewhere.
 */
void to_bf16(const float* x, uint16_t* out, size_t n);
/** The same on the portable scalar path (the reference the vector paths are tested against). */
void to_bf16_scalar(const float* x, uint16_t* out, size_t n);
/** Which conversion to_bf16 runs: "avx512_bf16", "avx512f" or "scalar". */
const char* to_bf16_isa();

/** The CPU's bf16 dot products: "amx" (AMX-BF16 tiles), "avx512_bf16" (vdpbf16ps) or "none". */
const char* bf16_capability();

}  // namespace span
