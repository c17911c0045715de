import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'

/**
 * Whether this CPU has bf16 dot-product instructions, which make bf16 the native backend's default
 * precision (as bf16 tensor cores make it cuda's: cuda/bf16.ts defaultPrecision). x86-64:
 * AVX512-BF16 (`avx512_bf16`: VDPBF16PS) or AMX (`amx_bf16`: TDPBF16PS), from Linux's
 * /proc/cpuinfo `flags`; 64-bit Arm: FEAT_BF16 (`bf16`: BFDOT, BFMMLA), from Linux's `Features`
 * line or macOS's `sysctl hw.optional.arm.FEAT_BF16` (Apple M2 and later). Elsewhere none is
 * detected. SPAN_CPU_FLAGS (a space- or comma-separated flag list) replaces what the CPU says, to
 * pretend a CPU with or without them (tests); it changes nothing else (OpenBLAS picks its kernels
 * from /proc/cpuinfo: native.ts pickOpenBlasCore).
 */
export const BF16_FLAGS = ['avx512_bf16', 'amx_bf16', 'bf16'] as const

export interface CpuBf16 {
  /** the CPU has at least one of BF16_FLAGS */
  has: boolean
  /** those of BF16_FLAGS it has */
  flags: string[]
  /** where the flags came from: SPAN_CPU_FLAGS, /proc/cpuinfo, sysctl, or none on this platform */
  source: string
}

let probed: {flags: Set<string>; source: string} | undefined

/** The CPU's feature flags as the operating system lists them (read once), or SPAN_CPU_FLAGS when set. */
export function cpuFlags(): {flags: Set<string>; source: string} {
  const env = process.env.SPAN_CPU_FLAGS
  if (env !== undefined) return {flags: new Set(env.split(/[\s,]+/).filter(Boolean)), source: 'SPAN_CPU_FLAGS'}
  return (probed ??= probe())
}

function probe(): {flags: Set<string>; source: string} {
  try {
    if (process.platform === 'linux') return {flags: linuxFlags(readFileSync('/proc/cpuinfo', 'utf8')), source: '/proc/cpuinfo'}
    if (process.platform === 'darwin' && process.arch === 'arm64') {
      const v = execFileSync('sysctl', ['-n', 'hw.optional.arm.FEAT_BF16'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim()
      return {flags: new Set(v === '1' ? ['bf16'] : []), source: 'sysctl hw.optional.arm.FEAT_BF16'}
    }
  } catch {
    // unreadable: as if the CPU had none
  }
  return {flags: new Set(), source: `no probe on ${process.platform}-${process.arch}`}
}

/** The first `flags` (x86) or `Features` (Arm) line of a /proc/cpuinfo text, as a set. */
export function linuxFlags(cpuinfo: string): Set<string> {
  const line = cpuinfo.split('\n').find((l) => /^(flags|Features)\s*:/.test(l))
  return new Set(line?.split(':')[1].trim().split(/\s+/).filter(Boolean) ?? [])
}

/** This CPU's bf16 dot products (see BF16_FLAGS). */
export function cpuBf16(): CpuBf16 {
  const {flags, source} = cpuFlags()
  const found = BF16_FLAGS.filter((f) => flags.has(f))
  return {has: found.length > 0, flags: found, source}
}

/** What `span doctor` says of it, e.g. `bf16 dot products (avx512_bf16 in /proc/cpuinfo)`. */
export function cpuBf16Line(b: CpuBf16 = cpuBf16()): string {
  return b.has ? `bf16 dot products (${b.flags.join(', ')} in ${b.source})` : `no bf16 dot products (none of ${BF16_FLAGS.join(', ')} in ${b.source})`
}
