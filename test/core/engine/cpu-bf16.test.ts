import {afterEach, describe, expect, it} from 'vitest'
import {cpuBf16, cpuBf16Line, cpuFlags, linuxFlags} from '../../../src/core/engine/cpu-bf16.js'
import {cpuPrecision} from '../../../src/core/engine/backend-precision.js'
import {nativeDefaultPrecision, nativePrecisionLine, nativePrecisions} from '../../../src/core/engine/native-precision.js'

// The CPU's bf16 dot products (cpu-bf16.ts) and what they make of native's precision
// (native-precision.ts, backend-precision.ts cpuPrecision): flags parsed from /proc/cpuinfo's
// x86 and Arm forms, SPAN_CPU_FLAGS replacing them, the default, and every refusal and notice.
const saved = {flags: process.env.SPAN_CPU_FLAGS, precision: process.env.SPAN_NATIVE_PRECISION}
afterEach(() => {
  for (const [k, v] of [
    ['SPAN_CPU_FLAGS', saved.flags],
    ['SPAN_NATIVE_PRECISION', saved.precision],
  ] as const) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})
const cpu = (flags: string, precision?: string) => {
  process.env.SPAN_CPU_FLAGS = flags
  if (precision === undefined) delete process.env.SPAN_NATIVE_PRECISION
  else process.env.SPAN_NATIVE_PRECISION = precision
}

describe('the CPU flags', () => {
  it('reads the first flags line of x86 and the Features line of Arm', () => {
    const x86 = 'processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n\nprocessor\t: 1\nflags\t\t: fpu\n'
    expect([...linuxFlags(x86)]).toEqual(['fpu', 'avx2', 'avx512f', 'avx512_bf16', 'amx_tile'])
    expect(linuxFlags('processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n').has('bf16')).toBe(true)
    expect(linuxFlags('no flags here\n').size).toBe(0)
  })

  it('SPAN_CPU_FLAGS replaces them (spaces or commas; empty: none)', () => {
    cpu('avx2, avx512_bf16  amx_bf16')
    expect(cpuFlags()).toEqual({flags: new Set(['avx2', 'avx512_bf16', 'amx_bf16']), source: 'SPAN_CPU_FLAGS'})
    expect(cpuBf16()).toEqual({has: true, flags: ['avx512_bf16', 'amx_bf16'], source: 'SPAN_CPU_FLAGS'})
    cpu('')
    expect(cpuBf16().has).toBe(false)
    expect(cpuBf16Line()).toBe('no bf16 dot products (none of avx512_bf16, amx_bf16, bf16 in SPAN_CPU_FLAGS)')
    cpu('avx512f avx512bw') // AVX-512 without its bf16 extension
    expect(cpuBf16().has).toBe(false)
    cpu('bf16')
    expect(cpuBf16Line()).toBe('bf16 dot products (bf16 in SPAN_CPU_FLAGS)')
  })
})

describe("native's precision", () => {
  it('defaults to bf16 exactly where the CPU has bf16 dot products; SPAN_NATIVE_PRECISION overrides', () => {
    cpu('avx512_bf16')
    expect([nativeDefaultPrecision(), nativePrecisions()]).toEqual(['bf16', ['fp32', 'bf16']])
    expect(nativePrecisionLine()).toBe('bf16 dot products (avx512_bf16 in SPAN_CPU_FLAGS): default precision bf16')
    cpu('avx2')
    expect([nativeDefaultPrecision(), nativePrecisions()]).toEqual(['fp32', ['fp32']])
    cpu('avx512_bf16', 'fp32')
    expect(nativeDefaultPrecision()).toBe('fp32')
    expect(nativePrecisionLine()).toMatch(/: default precision fp32 \(SPAN_NATIVE_PRECISION; bf16 without it\)$/)
    cpu('avx512_bf16', 'tf32') // not a native precision: ignored, as SPAN_CUDA_PRECISION's unknown values are
    expect(nativeDefaultPrecision()).toBe('bf16')
    cpu('avx2', 'bf16')
    expect(() => nativeDefaultPrecision()).toThrow(/^SPAN_NATIVE_PRECISION=bf16 needs a CPU with bf16 dot products; this one has none/)
    expect(nativePrecisionLine()).toMatch(/default precision fp32 \(SPAN_NATIVE_PRECISION=bf16 is refused on this CPU\)$/)
  })

  const lines: string[] = []
  const ask = (name: string, o: Parameters<typeof cpuPrecision>[1], auto = false) => {
    lines.length = 0
    try {
      return cpuPrecision(name, o, auto, (l) => lines.push(l))
    } catch (err) {
      return `${(err as {exitCode?: number}).exitCode ?? '?'}: ${(err as Error).message}`
    }
  }

  it('runs what is asked where it can, else refuses in one line with exit 2', () => {
    cpu('avx512_bf16')
    expect([ask('native', {}), ask('native', {precision: 'bf16'}), ask('native', {precision: 'fp32'}), ask('cuda', {precision: 'tf32'})]).toEqual([
      'bf16',
      'bf16',
      'fp32',
      null,
    ])
    expect(ask('native', {precision: 'tf32'})).toBe('2: --precision tf32 needs --backend cuda; --backend native computes in fp32 or bf16')
    expect(ask('native', {device: 1})).toBe('2: --device 1 needs --backend cuda; --backend native has no devices')
    expect(ask('wasm', {precision: 'bf16'})).toBe(
      '2: --precision bf16 needs --backend cuda, or native on a CPU with bf16 dot products; --backend wasm has no devices or precisions',
    )
    expect(ask('cpu', {precision: 'fp32'})).toBe('fp32')
    cpu('avx2')
    expect(ask('native', {precision: 'bf16', precisionFlag: '--compute-precision'})).toBe(
      '2: --compute-precision bf16 needs --backend cuda, or native on a CPU with bf16 dot products; --backend native computes in fp32 only on this CPU (no bf16 dot products): see span doctor',
    )
    expect(ask('native', {precision: 'bf16'}, true)).toBe(
      '2: --precision bf16 needs --backend cuda, or native on a CPU with bf16 dot products; --backend auto chose native, which computes in fp32 only on this CPU (no bf16 dot products) (see span doctor)',
    )
    expect(lines).toEqual([])
  })

  it("what only a resumed run's config gave and the backend cannot do: its default, with a notice", () => {
    cpu('avx2')
    expect(ask('native', {precision: 'bf16', inherited: ['precision']})).toBe('fp32')
    expect(lines).toEqual([
      'span: the resumed run ran at --precision bf16; --backend native computes in fp32 only on this CPU (no bf16 dot products): the run continues at fp32',
    ])
    cpu('amx_bf16')
    expect(ask('native', {precision: 'bf16', inherited: ['precision']})).toBe('bf16') // it can: kept, silently
    expect(lines).toEqual([])
    expect(ask('native', {precision: 'fp16', device: 0, inherited: ['precision', 'device']})).toBe('bf16')
    expect(lines).toEqual(['span: the resumed run ran on --device 0 at --precision fp16; --backend native computes in fp32 or bf16: the run continues at bf16'])
    expect(ask('wasm', {precision: 'bf16', inherited: ['precision']})).toBe('fp32')
    expect(lines).toEqual(['span: the resumed run ran at --precision bf16; --backend wasm computes in fp32 on the CPU: the run continues at fp32'])
  })
})
