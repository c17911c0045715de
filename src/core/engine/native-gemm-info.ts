import {type GemmPath, type NativeInfo} from './native-kernels.js'
import {loadNative, nativeAddon} from './native.js'

/** Where the native backend's matrix products run (native/src/gemm.h), for `span doctor`. */
export interface NativeGemmReport {
  /** the path in use: "span avx512 (avx512f, avx512_bf16)", "onednn 2.6.3 (avx512_core_bf16)", "openblas (Haswell)", "builtin" */
  gemm: string
  path: GemmPath
  /** the instruction set that path runs */
  isa: string
  /** oneDNN's implementation per precision, when the path is oneDNN */
  impl: {fp32: string; bf16: string} | null
  /** the other paths this build has, in the order they stand in for it */
  fallbacks: GemmPath[]
  /** the CPU's bf16 dot products: "amx", "avx512_bf16" or "none" */
  bf16: string
  /** how operands are rounded to bf16 */
  bf16Convert: string
  /** SPAN_GEMM_PATH when set: the path asked for (the default runs where this build has no such path) */
  requested?: string
}

/** The report from the addon's info(); null when the addon is not loaded or predates it (no gemm field). */
export function nativeGemmReport(): NativeGemmReport | null {
  if (!loadNative().available) return null
  const i: NativeInfo | undefined = nativeAddon()?.info()
  if (!i?.gemm || !i.gemmPath) return null
  return {
    gemm: i.gemm,
    path: i.gemmPath,
    isa: i.gemmIsa ?? '?',
    impl: i.gemmPath === 'onednn' && i.gemmImpl ? i.gemmImpl : null,
    fallbacks: (i.gemmPaths ?? []).filter((p) => p !== i.gemmPath),
    bf16: i.bf16 ?? 'none',
    bf16Convert: i.bf16Convert ?? 'scalar',
    ...(process.env.SPAN_GEMM_PATH ? {requested: process.env.SPAN_GEMM_PATH} : {}),
  }
}

const BF16 = {
  amx: 'AMX-BF16 tiles (and avx512_bf16 dot products)',
  avx512_bf16: 'avx512_bf16 dot products (vdpbf16ps)',
  none: 'none: no bf16 dot products on this CPU',
} as Record<string, string>

/** doctor's three lines: the GEMM path, its ISA, the bf16 capability. */
export function gemmLines(r: NativeGemmReport): string[] {
  const impl = r.impl ? `; fp32 ${r.impl.fp32 || 'none'}, bf16 ${r.impl.bf16 || 'none'}` : ''
  const fallbacks = r.fallbacks.length ? `; fallbacks: ${r.fallbacks.join(', ')}` : ''
  const asked =
    r.requested === undefined
      ? ''
      : r.requested === r.path
        ? ' (SPAN_GEMM_PATH)'
        : ` (SPAN_GEMM_PATH=${r.requested} is no path of this build: ${[r.path, ...r.fallbacks].join(', ')}; the default runs)`
  return [
    `native gemm: ${r.gemm}${asked}${impl}${fallbacks}`,
    `native gemm isa: ${r.isa}`,
    `native bf16: ${BF16[r.bf16] ?? r.bf16} (operands rounded with ${r.bf16Convert})`,
  ]
}
