/**
 * vitest globalSetup: on a CPU with bf16 dot products (avx512_bf16, AMX) the native backend's
 * matrix products default to bf16 (src/core/engine/native-precision.ts), as cuda's do on compute
 * capability 8.0 (cuda-precision.ts). The tests' expected values, fixtures and tolerances mean
 * fp32, so fp32 is the tests' default here (span processes inherit it); the bf16 tests ask for bf16,
 * and the default itself is tested with the variable removed (test/core/engine/native-bf16.test.ts).
 */
export default function setup(): void {
  process.env.SPAN_NATIVE_PRECISION ??= 'fp32'
}
