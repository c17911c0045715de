// `span doctor`'s GEMM lines (src/core/engine/native-gemm-info.ts): the path, its ISA, the bf16 capability.
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {gemmLines, nativeGemmReport} from '../../../src/core/engine/native-gemm-info.js'
import {loadNative, nativeAddon} from '../../../src/core/engine/native.js'

const root = join(import.meta.dirname, '..', '..', '..')
const status = loadNative()

describe('gemmLines', () => {
  it('says the path with oneDNN implementations and fallbacks, the ISA, the bf16 capability: one line each', () => {
    const lines = gemmLines({
      gemm: 'onednn 2.6.3 (avx512_core_bf16)',
      path: 'onednn',
      isa: 'avx512_core_bf16',
      impl: {fp32: 'brg:avx512_core', bf16: 'brg:avx512_core_bf16'},
      fallbacks: ['blas', 'builtin'],
      bf16: 'avx512_bf16',
      bf16Convert: 'avx512_bf16',
    })
    expect(lines).toEqual([
      'native gemm: onednn 2.6.3 (avx512_core_bf16); fp32 brg:avx512_core, bf16 brg:avx512_core_bf16; fallbacks: blas, builtin',
      'native gemm isa: avx512_core_bf16',
      'native bf16: avx512_bf16 dot products (vdpbf16ps) (operands rounded with avx512_bf16)',
    ])
    const plain = gemmLines({gemm: 'builtin', path: 'builtin', isa: 'avx2 (compiled)', impl: null, fallbacks: [], bf16: 'none', bf16Convert: 'scalar'})
    expect(plain[0]).toBe('native gemm: builtin')
    expect(plain[2]).toMatch(/^native bf16: none: no bf16 dot products/)
    const base = {isa: 'avx512_bf16', impl: null, bf16: 'avx512_bf16', bf16Convert: 'avx512_bf16'}
    const own = {...base, gemm: 'span avx512 (avx512f, avx512_bf16)', path: 'avx512' as const, fallbacks: ['onednn' as const, 'builtin' as const]}
    expect(gemmLines({...own, requested: 'avx512'})[0]).toBe('native gemm: span avx512 (avx512f, avx512_bf16) (SPAN_GEMM_PATH); fallbacks: onednn, builtin')
    expect(gemmLines({...own, requested: 'mkl'})[0]).toBe(
      'native gemm: span avx512 (avx512f, avx512_bf16) (SPAN_GEMM_PATH=mkl is no path of this build: avx512, onednn, builtin; the default runs); fallbacks: onednn, builtin',
    )
  })
})

describe.skipIf(!status.available)('span doctor names the native GEMM', () => {
  it('prints the three lines of the addon it loads, and the same report in --json', () => {
    const report = nativeGemmReport()!
    expect(report.gemm).toBe(nativeAddon()!.info().gemm)
    const r = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor'], {cwd: root, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    for (const line of gemmLines(report)) expect(r.stdout.split('\n')).toContain(line)
    const j = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor', '--json'], {cwd: root, encoding: 'utf8'})
    const last = JSON.parse(j.stdout.trim().split('\n').at(-1)!)
    expect(last.native_gemm).toEqual(report)
  })

  it('SPAN_GEMM_PATH picks another path of the build; doctor says so', () => {
    const other = nativeAddon()!.info().gemmPaths!.at(-1)! // builtin, in every build
    const env = {...process.env, SPAN_GEMM_PATH: other}
    const r = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor'], {cwd: root, encoding: 'utf8', env})
    expect(r.stdout).toMatch(new RegExp(`^native gemm: ${other} \\(SPAN_GEMM_PATH\\)`, 'm'))
  })
})
