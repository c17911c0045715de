import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {probeCuda} from '../../../src/core/engine/cuda/addon.js'
import {candidates, realFs} from '../../../src/core/engine/cuda/libs.js'
import {CASES, REFUSALS, gemm} from '../../../tools/cublaslt-case-list.js'
import {COMPUTE, type LtCase, type LtResult, SENTINEL, STATUS, T, buildStandin, caseText, runCase} from '../../../tools/cublaslt-cases.js'
import {type Expected, dgeluTanh, geluTanh, reference, roundBf16} from '../../../tools/cublaslt-reference.js'
import {HAS_CXX} from '../../helpers/cuda-toolchain.js'

const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0

// The cuBLASLt stand-in (native/cuda/standin/cublaslt/, tests only) against cuBLASLt's documented
// semantics (tools/cublaslt-reference.ts, in double, from cublasLt.h): every case of
// tools/cublaslt-case-list.ts runs through lt-run (dlopen, abi.h's prototypes) and each output
// buffer is compared whole: computed elements within the rounding of fp32 accumulation (bf16:
// one ulp), every other element (ld padding, bias and aux past their length) still the sentinel.
let lib = ''
let ltRun = ''
const run = (c: LtCase): LtResult => runCase(ltRun, lib, c)

/** Every element of `got` against `want`: within tol·scale (+ one bf16 ulp), or exactly where scale is 0. */
function close(name: string, got: Float64Array, want: Float64Array, scale: Float64Array | undefined, bf16: boolean, tol = 2e-6) {
  expect(got.length, name).toBe(want.length)
  for (let i = 0; i < want.length; i++) {
    const s = scale?.[i] ?? 0
    if (s === 0 && want[i] === SENTINEL) expect(got[i], `${name}[${i}] untouched`).toBe(SENTINEL)
    else {
      const ulp = bf16 ? Math.abs(want[i]) * 2 ** -7 : 0
      expect(Math.abs(got[i] - want[i]), `${name}[${i}]: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(tol * (s + 1e-30) + ulp + 1e-7)
    }
  }
}

/** The outputs against the reference; the inputs (A, B, and C unless D is C) unchanged. */
function check(c: LtCase, r: LtResult, want: Expected) {
  const bf16 = c.D.type === T.bf16
  const inPlace = c.extra?.includes('alias') === true
  close('D', r.bufs[inPlace ? 'C' : 'D'].values, want.D, want.scaleD, bf16)
  if (want.aux) close('aux', r.bufs.aux.values, want.aux, want.scaleAux, bf16)
  if (want.bias)
    close(
      'bias',
      r.bufs.bias.values,
      want.bias,
      Float64Array.from(want.bias, (v) => (v === SENTINEL ? 0 : Math.abs(v) * 10 + 1)),
      bf16,
    )
  for (const x of inPlace ? ['A', 'B'] : ['A', 'B', 'C']) if (r.inputs[x]) expect(r.bufs[x].bytes.equals(r.inputs[x].bytes), `${x} unchanged`).toBe(true)
}

describe.skipIf(!HAS_CXX)('the cuBLASLt stand-in', () => {
  beforeAll(() => {
    ;({lib, ltRun} = buildStandin(mkdtempSync(join(tmpdir(), 'span-standin-'))))
  })

  it('is what span looks for in SPAN_CUDA_LIBS (libcublasLt.so.13), and the cuda loader opens it', () => {
    const dir = join(lib, '..')
    expect(lib).toBe(join(dir, 'libcublasLt.so.13'))
    expect(candidates('cublasLt', {env: {SPAN_CUDA_LIBS: dir}, home: '/nonexistent', fs: realFs})[0]).toBe(lib)
    const p = probeCuda(0, {env: {SPAN_CUDA_LIBS: dir}, home: '/nonexistent', fs: realFs})
    if (typeof p === 'string') return // the cuda loader is not built here: its own tests say so
    expect(p.cublasLt.path).toBe(lib)
    expect(p.cublasLtVersion).toBe(130000)
  })

  describe.each(CASES.map((c) => [c.name, c] as const))('%s', (_, c) => {
    it('equals the reference, and touches nothing else', () => {
      const r = run(c)
      expect([r.heuristic, r.status]).toEqual(c.extra?.includes('noalgo') ? [-1, STATUS.ok] : [STATUS.ok, STATUS.ok])
      check(c, r, reference(c, r.inputs))
    })
  })

  it('in place (D is C) gives, bit for bit, what D ≠ C gives', () => {
    const inPlace = CASES.find((c) => c.extra?.includes('alias')) as LtCase
    const [a, b] = [run(inPlace), run({...inPlace, extra: []})]
    expect(a.status).toBe(STATUS.ok)
    const {rows, cols, ld} = inPlace.D
    for (let j = 0; j < cols; j++) for (let i = 0; i < rows; i++) expect(a.bufs.C.values[i + j * ld]).toBe(b.bufs.D.values[i + j * ld])
    expect(a.bufs.C.bytes.equals(a.inputs.C.bytes)).toBe(false)
  })

  it('beta 0 never reads C: a C of NaN gives a finite D', () => {
    const r = run(CASES.find((c) => c.name.startsWith('beta 0 never reads C')) as LtCase)
    expect(r.bufs.C.values.every(Number.isNaN)).toBe(true)
    expect(r.bufs.D.values.every(Number.isFinite)).toBe(true)
  })

  it('GELU is the tanh form: at most 4.7e-4 from the erf form over [-6, 6], within 1e-6 of the tanh formula', () => {
    const c = CASES.find((x) => x.name.startsWith('GELU is the tanh form')) as LtCase
    const r = run(c)
    const xs = r.bufs.A.values
    const erfGelu = (x: number) => 0.5 * x * (1 + erf(x / Math.SQRT2))
    const dTanh = Math.max(...xs.map((x, i) => Math.abs(r.bufs.D.values[i] - geluTanh(x))))
    const dErf = Math.max(...xs.map((x, i) => Math.abs(r.bufs.D.values[i] - erfGelu(x))))
    expect(dTanh).toBeLessThan(1e-6)
    expect(dErf).toBeGreaterThan(4.5e-4)
    expect(dErf).toBeLessThan(4.8e-4)
  })

  it('DGELU is the derivative of the tanh form (finite differences)', () => {
    for (const x of [-3, -1.2, -0.3, 0, 0.4, 1.7, 3.5]) expect(dgeluTanh(x)).toBeCloseTo((geluTanh(x + 1e-5) - geluTanh(x - 1e-5)) / 2e-5, 8)
  })

  it('bf16 output is rounded to nearest even, bit for bit, ties included', () => {
    const c = CASES.find((x) => x.name.startsWith('bf16 rounding')) as LtCase
    const r = run(c)
    const [a, b, d] = [r.bufs.A.values, r.bufs.B.values, r.bufs.D.bytes]
    let ties = 0
    for (let j = 0; j < 64; j++)
      for (let i = 0; i < 64; i++) {
        const exact = a[i] * b[j] // two bf16: exact in fp32
        if ((fp32Bits(exact) & 0xffff) === 0x8000) ties++ // halfway between two bf16
        expect(d.readUInt16LE(2 * (i + j * 64)), `(${i}, ${j}) ${exact}`).toBe(fp32Bits(roundBf16(exact)) >>> 16)
      }
    expect(ties).toBeGreaterThan(0)
  })

  it('TF32 compute rounds the inputs: its result differs from fp32 compute by far more than fp32 rounding', () => {
    const tf = CASES.find((x) => x.name === 'compute TF32') as LtCase
    const [r32, r19] = [run({...tf, compute: COMPUTE.f32}), run(tf)]
    const diff = Math.max(...r32.bufs.D.values.map((v, i) => Math.abs(v - r19.bufs.D.values[i])))
    expect(diff).toBeGreaterThan(1e-5)
  })

  describe.each(REFUSALS.map((c) => [c.name, c] as const))('refuses: %s', (_, c) => {
    it(`heuristic and matmul say ${c.expect?.join(', ')}, and D is untouched`, () => {
      const r = run(c)
      expect([r.heuristic, r.status]).toEqual(c.expect)
      expect(r.bufs.D.values.every((v) => v === SENTINEL)).toBe(true)
    })
  })

  it('an attribute of the wrong size is INVALID_VALUE (cublasLt.h), an unknown one NOT_SUPPORTED', () => {
    const c = gemm({name: 'attr sizes', m: 4, n: 4, k: 3, extra: ['rawattr 3 8 1', 'rawattr 7 2 1', 'rawattr 99 4 1']})
    const r = run(c).stdout
    expect(r).toMatch(/^attr 3 status 7$/m)
    expect(r).toMatch(/^attr 7 status 7$/m)
    expect(r).toMatch(/^attr 99 status 15$/m)
  })
})

describe.skipIf(!HAS_CXX || !HAS_PYTHON)('fixtures/cuda/cublaslt-cases.json, the cases saved for the real cuBLASLt', () => {
  const fixture = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'cuda', 'cublaslt-cases.json')
  const saved = JSON.parse(readFileSync(fixture, 'utf8')) as {cases: {name: string; text: string; outputs: Record<string, {base64: string}>}[]}
  const compare = (fix: string) =>
    spawnSync('python3', [join(import.meta.dirname, '..', '..', '..', 'tools', 'compare-cublaslt-cases.py'), ltRun, lib, '--fixture', fix], {encoding: 'utf8'})
  beforeAll(() => {
    if (!lib) ({lib, ltRun} = buildStandin(mkdtempSync(join(tmpdir(), 'span-standin-'))))
  })

  it('holds every case of the case list, as its text is today (else: npx tsx tools/make-cublaslt-cases.ts)', () => {
    expect(saved.cases.map((c) => c.name)).toEqual([...CASES, ...REFUSALS].map((c) => c.name))
    for (const c of [...CASES, ...REFUSALS]) expect(saved.cases.find((x) => x.name === c.name)?.text, c.name).toBe(caseText(c))
  })

  it('tools/compare-cublaslt-cases.py finds the stand-in built here equal to the saved results', () => {
    const r = compare(fixture)
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^${saved.cases.length} passed, 0 failed$`, 'm'))
  })

  it('with LIBCUDA, lt-run moves every buffer through cuMemAlloc and copies (a host-memory libcuda here), with the same results', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-fakecuda-'))
    writeFileSync(join(dir, 'cuda.c'), FAKE_LIBCUDA)
    const cc = spawnSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-o', join(dir, 'libcuda.so.1'), join(dir, 'cuda.c')], {encoding: 'utf8'})
    expect(cc.status, cc.stderr).toBe(0)
    const r = spawnSync(
      'python3',
      [join(import.meta.dirname, '..', '..', '..', 'tools', 'compare-cublaslt-cases.py'), ltRun, lib, join(dir, 'libcuda.so.1'), '--fixture', fixture],
      {encoding: 'utf8', env: {...process.env, FAKE_CUDA_LOG: join(dir, 'log')}},
    )
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(readFileSync(join(dir, 'log'), 'utf8').split('\n').length).toBeGreaterThan(saved.cases.length * 3) // A, B, D at least
  })

  it('and reports a value that differs (the comparison can fail)', () => {
    const edited = structuredClone(saved)
    const d = Buffer.from(edited.cases[0].outputs.D.base64, 'base64')
    d.writeFloatLE(d.readFloatLE(0) + 0.01, 0)
    edited.cases[0].outputs.D.base64 = d.toString('base64')
    const path = join(mkdtempSync(join(tmpdir(), 'span-fixture-')), 'cases.json')
    writeFileSync(path, JSON.stringify(edited))
    const r = compare(path)
    expect(r.status).toBe(1)
    expect(r.stdout).toContain(`DIFF ${saved.cases[0].name}: D[0] = `)
    expect(r.stdout).toMatch(/^\d+ passed, 1 failed$/m)
  })
})

/** The driver calls lt-run makes, over host memory; it counts allocations in a file beside itself. */
const FAKE_LIBCUDA = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int cuInit(unsigned f) { (void)f; return 0; }
int cuDevicePrimaryCtxRetain(void** c, int d) { (void)d; *c = (void*)1; return 0; }
int cuCtxSetCurrent(void* c) { (void)c; return 0; }
int cuMemAlloc_v2(unsigned long long* p, size_t n) {
  FILE* f = fopen(getenv("FAKE_CUDA_LOG"), "a");
  if (f) fputs("cuMemAlloc_v2\\n", f), fclose(f);
  *p = (unsigned long long)malloc(n);
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long d, const void* h, size_t n) { memcpy((void*)d, h, n); return 0; }
int cuMemcpyDtoH_v2(void* h, unsigned long long d, size_t n) { memcpy(h, (void*)d, n); return 0; }
int cuCtxSynchronize(void) { return 0; }
`

function fp32Bits(x: number): number {
  return new Uint32Array(new Float32Array([x]).buffer)[0]
}

/** erf to 1e-12 (Abramowitz–Stegun 7.1.26 is too coarse here): its Maclaurin series, then the continued fraction. */
function erf(x: number): number {
  const s = Math.sign(x)
  const a = Math.abs(x)
  if (a < 3) {
    let term = a
    let sum = a
    for (let n = 1; n < 80; n++) {
      term *= (-a * a) / n
      sum += term / (2 * n + 1)
    }
    return (s * 2 * sum) / Math.sqrt(Math.PI)
  }
  let f = 0
  for (let n = 60; n >= 1; n--) f = n / 2 / (a + f)
  return s * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / (a + f))
}
