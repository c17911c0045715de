/**
 * Saves the cuBLASLt stand-in's results on every case of tools/cublaslt-case-list.ts as
 * fixtures/cuda/cublaslt-cases.json, for tools/compare-cublaslt-cases.py to run the same cases on
 * the real cuBLASLt (tools/gpu-check.sh, on a GPU) and compare. Each case is lt-run's text (its
 * inputs by seed: the text alone is the case), the two statuses, and each output buffer whole
 * (base64 of its bytes, with its sha256 and sum) with the tolerance the comparison allows: the
 * reference's scale of terms × 1e-5 (TF32 / FAST_16BF: × 2⁻⁹, the hardware's input rounding may
 * differ from the stand-in's), plus one bf16 ulp for bf16 outputs.
 *   npx tsx tools/make-cublaslt-cases.ts [OUT]   (default fixtures/cuda/cublaslt-cases.json)
 */
import {createHash} from 'node:crypto'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {CASES, REFUSALS} from './cublaslt-case-list.js'
import {COMPUTE, EPI, type LtCase, STATUS, T, buildStandin, caseText, runCase} from './cublaslt-cases.js'
import {reference} from './cublaslt-reference.js'

const out = process.argv[2] ?? join(import.meta.dirname, '..', 'fixtures', 'cuda', 'cublaslt-cases.json')

/** The buffers a case writes: D (C in place), aux (GELU_AUX*), bias (bias gradients). */
function outputs(c: LtCase): string[] {
  const names = [c.extra?.includes('alias') ? 'C' : 'D']
  if (c.epilogue === EPI.GELU_AUX || c.epilogue === EPI.GELU_AUX_BIAS) names.push('aux')
  if (c.epilogue === EPI.BGRADA || c.epilogue === EPI.BGRADB || c.epilogue === EPI.DGELU_BGRAD) names.push('bias')
  return names
}

const {lib, ltRun} = buildStandin(mkdtempSync(join(tmpdir(), 'span-standin-')))
const cases = [...CASES, ...REFUSALS].map((c) => {
  const r = runCase(ltRun, lib, c)
  const ok = r.status === STATUS.ok
  const scale = ok ? reference(c, r.inputs).scaleD.reduce((m, x) => Math.max(m, x), 0) : 0
  const rtol = c.compute === COMPUTE.f32 ? 1e-5 : 2 ** -9
  const buffers = Object.fromEntries(
    outputs(c).map((x) => {
      const b = r.bufs[x]
      const sum = b.values.reduce((s, v) => s + v, 0)
      return [x, {type: b.type, sha256: createHash('sha256').update(b.bytes).digest('hex'), sum, base64: b.bytes.toString('base64')}]
    }),
  )
  return {
    name: c.name,
    text: caseText(c),
    heuristic: r.heuristic,
    status: r.status,
    tolerance: {abs: rtol * scale + 1e-7, bf16Ulps: c.D.type === T.bf16 ? 1 : 0},
    outputs: ok ? buffers : {D: buffers.D ?? buffers.C},
  }
})
mkdirSync(dirname(out), {recursive: true})
const doc = {
  about: 'cuBLASLt cases and the stand-in’s results (native/cuda/standin/cublaslt), for tools/compare-cublaslt-cases.py to compare with the real library',
  madeBy: 'npx tsx tools/make-cublaslt-cases.ts',
  statuses: {success: 0, notInitialized: 1, invalidValue: 7, notSupported: 15},
  cases,
}
writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`)
process.stdout.write(`${out}: ${cases.length} cases\n`)
