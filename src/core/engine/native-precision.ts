import {SpanError} from '../stream/errors.js'
import {BF16_FLAGS, cpuBf16, cpuBf16Line} from './cpu-bf16.js'

/**
 * The native backend's precisions (`--precision`, `--compute-precision`; docs/precision.md): fp32, or
 * bf16 with the cuda backend's meaning (cuda/bf16.ts): every matrix product's two operands rounded to
 * bf16 (native/src/gemm.h round_bf16, cvt.rn.bf16.f32's rounding), fp32 accumulation and result;
 * weights, gradients, optimiser state, LayerNorm, softmax and losses stay fp32. bf16 is the default
 * and is allowed where the CPU has bf16 dot products (cpu-bf16.ts), as cuda's default follows the
 * GPU's tensor cores; elsewhere fp32 only.
 */
export type NativePrecision = 'fp32' | 'bf16'

/** What native runs on this CPU: fp32, and bf16 where it has bf16 dot products. */
export const nativePrecisions = (): NativePrecision[] => (cpuBf16().has ? ['fp32', 'bf16'] : ['fp32'])

/**
 * The precision when none is asked for: SPAN_NATIVE_PRECISION (fp32 or bf16; anything else is
 * ignored, as SPAN_CUDA_PRECISION's is), else bf16 where the CPU has bf16 dot products, else fp32.
 * The variable naming bf16 on a CPU without them is a usage error, as the flag would be.
 */
export function nativeDefaultPrecision(): NativePrecision {
  const env = process.env.SPAN_NATIVE_PRECISION
  if (env === 'bf16' && !cpuBf16().has)
    throw new SpanError(
      `SPAN_NATIVE_PRECISION=bf16 needs a CPU with bf16 dot products; this one has none (none of ${BF16_FLAGS.join(', ')} in ${cpuBf16().source}: see span doctor)`,
      2,
    )
  if (env === 'fp32' || env === 'bf16') return env
  return cpuBf16().has ? 'bf16' : 'fp32'
}

/** `span doctor`'s words: the CPU's bf16 capability and the default it gives, e.g. `bf16 dot products (avx512_bf16 in /proc/cpuinfo): default precision bf16`. */
export function nativePrecisionLine(): string {
  const has = cpuBf16().has
  const byCpu = has ? 'bf16' : 'fp32'
  const env = process.env.SPAN_NATIVE_PRECISION
  const p =
    env === 'fp32' || (env === 'bf16' && has)
      ? `${env} (SPAN_NATIVE_PRECISION; ${byCpu} without it)`
      : env === 'bf16'
        ? `${byCpu} (SPAN_NATIVE_PRECISION=bf16 is refused on this CPU)`
        : byCpu
  return `${cpuBf16Line()}: default precision ${p}`
}
