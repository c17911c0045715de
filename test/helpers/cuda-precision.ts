/**
 * vitest globalSetup: the stand-in device reports compute capability 8.0, where the cuda backend's
 * matrix products default to bf16 (src/core/engine/cuda/bf16.ts). The tests that hold cuda to
 * native's results at fp32 tolerances (1e-5, 1e-4) mean fp32, so fp32 is the tests' default here
 * (span processes inherit it); the bf16 tests ask for bf16, and the default itself is tested with
 * the variable removed (test/core/engine/cuda/bf16-train.test.ts).
 */
export default function setup(): void {
  process.env.SPAN_CUDA_PRECISION ??= 'fp32'
}
