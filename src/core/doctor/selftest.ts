import * as tf from '@tensorflow/tfjs'
import {initBackend} from '../engine/backend.js'
import {cudaKernelNames, cudaKernelOf, registerCudaKernel} from '../engine/cuda/kernel-table.js'
import {fallbackCounts} from '../engine/cuda/register.js'
import {selftestCases} from '../engine/cuda/selftest-cases.js'
import {wmmaSelftestRow} from '../engine/cuda/selftest-wmma.js'
import {FUSED_KERNELS} from '../engine/fused-kernels.js'
import {collate, disposeBatch, type MaskedExample, toTensors} from '../model/batch.js'
import {presetConfig} from '../model/config.js'
import {EVAL} from '../model/layers.js'
import {SpanBertForPreTraining} from '../model/pretraining.js'
import {lossAndGrads} from '../train/step.js'
import {Rng} from '../util/rng.js'
import {graphSelftestRow} from './selftest-graph.js'
import {fp16Cases} from './selftest-fp16.js'
import {optimiserCases} from './selftest-optimiser.js'
import {maxOf} from '../util/arrays.js'

/**
 * `span doctor --selftest` (issue 20): every registered cuda kernel against the reference backend
 * (native, else cpu) on the engine's selftest-cases.ts' inputs (and this room's AdamW cases), fp32 within 1e-5 relative; then one `tiny`
 * pre-training step's loss and every gradient within 1e-4. A case's error counts against every
 * kernel that ran on the device in it (a case with a row of its own, the multi-tensor AdamW and
 * bf16 products, counts against that row only); a kernel that never ran on the device (it fell
 * back to cpu, or declined to the composite) fails with 0 cases.
 */
export type SelftestRow = {kernel: string; cases: number; maxRelError: number; ok: boolean}
export type SelftestReport = {reference: string; rows: SelftestRow[]; step: SelftestRow; failedCases: string[]; ok: boolean}

type Preset = Parameters<typeof presetConfig>[0]

export const KERNEL_TOLERANCE = 1e-5
export const STEP_TOLERANCE = 1e-4

const ran = new Set<string>()
const FUSED = new Set<string>(Object.values(FUSED_KERNELS))
let watched = false

/** Wraps each cuda kernel so that a run on the device (not the cpu fallback, not a decline) lands in `ran`. */
function watchKernels(): void {
  if (watched) return
  watched = true
  for (const name of cudaKernelNames()) {
    if (FUSED.has(name)) {
      const own = cudaKernelOf(name)! // looked up at call time by fused-kernels.ts
      registerCudaKernel(name, (a) => {
        const r = own(a)
        if (r) ran.add(name)
        return r
      })
      continue
    }
    const config = tf.getKernel(name, 'cuda')
    if (!config) continue
    tf.unregisterKernel(name, 'cuda')
    const kernelFunc: tf.KernelFunc = (a) => {
      const before = fallbackCounts()[name] ?? 0
      const r = config.kernelFunc(a)
      if ((fallbackCounts()[name] ?? 0) === before) ran.add(name)
      return r
    }
    tf.registerKernel({...config, kernelFunc})
  }
}

type Out = {shape: number[]; dtype: string; v: number[]; name?: string}

async function outputs(backend: string, f: () => tf.Tensor | tf.Tensor[]): Promise<Out[] | string> {
  await tf.setBackend(backend)
  try {
    return tf.tidy(() => [f()].flat().map((t) => ({shape: t.shape, dtype: t.dtype, v: Array.from(t.dataSync() as ArrayLike<number>)})))
  } catch (err) {
    return (err as Error).message.split('\n')[0]
  }
}

/** Largest |got − want| / max(|want|, 1) over every element (equal values, infinities included, 0); Infinity for a shape, dtype or NaN mismatch. */
export function relError(got: Out[], want: Out[]): number {
  if (got.length !== want.length) return Infinity
  let worst = 0
  got.forEach((g, j) => {
    const w = want[j]
    if (g.dtype !== w.dtype || g.shape.join() !== w.shape.join()) worst = Infinity
    else
      g.v.forEach(
        (x, i) =>
          (worst = Math.max(
            worst,
            Number.isNaN(w.v[i]) !== Number.isNaN(x) ? Infinity : Number.isNaN(x) || x === w.v[i] ? 0 : Math.abs(x - w.v[i]) / Math.max(Math.abs(w.v[i]), 1),
          )),
      )
  })
  return worst
}

/**
 * A row per registered kernel (the cases it ran on the device in, the worst error of those) and one
 * per case with a `row` of its own (SelftestCase): that case counts for the kernels it ran but its
 * error is its row's, so that a failing multi-tensor AdamW or bf16 product names itself.
 */
export async function kernelRows(reference: string, failed: string[], cases = selftestCases([...optimiserCases(), ...fp16Cases()])): Promise<SelftestRow[]> {
  const stats = new Map<string, {cases: number; err: number}>(cudaKernelNames().map((k) => [k, {cases: 0, err: 0}]))
  const own = new Map<string, {cases: number; err: number}>()
  watchKernels()
  for (const c of cases) {
    const want = await outputs(reference, c.f)
    ran.clear()
    const got = await outputs('cuda', c.f)
    const err = typeof want === 'string' || typeof got === 'string' ? Infinity : relError(got, want)
    if (!(err <= KERNEL_TOLERANCE))
      failed.push(`${c.label}: ${typeof want === 'string' ? `reference: ${want}` : typeof got === 'string' ? got : `error ${err}`}`)
    const add = (m: Map<string, {cases: number; err: number}>, k: string, e: number) => {
      const s = m.get(k) ?? {cases: 0, err: 0}
      m.set(k, {cases: s.cases + 1, err: Math.max(s.err, e)})
    }
    for (const k of ran) if (stats.has(k)) add(stats, k, c.row ? 0 : err)
    if (c.row) add(own, c.row, err)
  }
  return [...stats, ...own].map(([kernel, s]) => ({kernel, cases: s.cases, maxRelError: s.err, ok: s.cases > 0 && s.err <= KERNEL_TOLERANCE}))
}

const VOCAB = 1000

const maxAbs = (v: number[]) => v.reduce((m, x) => Math.max(m, Math.abs(x)), 0)

/**
 * Per output, largest |got − want| over that output's largest |want| (step.test.ts' measure), the
 * scale floored at 1e-4 of the largest |gradient| of the step: the attention key bias' gradient is
 * zero in exact arithmetic (a bias on every key shifts each query's scores equally, and softmax
 * ignores a shift), so its own scale is rounding noise (seen: mini's, 2e-4 against itself here).
 */
function stepError(got: Out[], want: Out[]): {err: number; worst: string} {
  if (got.length !== want.length) return {err: Infinity, worst: `${got.length} outputs, expected ${want.length}`}
  const floor =
    1e-4 *
    maxOf(
      want.slice(1).map((w) => maxAbs(w.v)),
      1e-6,
    )
  const errs = got.map((g, j) => {
    const w = want[j].v
    if (g.shape.join() !== want[j].shape.join()) return Infinity
    const scale = Math.max(maxAbs(w), floor)
    return g.v.reduce((m, x, i) => Math.max(m, Number.isNaN(x) ? Infinity : Math.abs(x - w[i]) / scale), 0)
  })
  const j = errs.indexOf(maxOf(errs))
  return {err: errs[j], worst: want[j].name ?? String(j)}
}

/** Two masked sequences of length 16 (a span each), segments A/B, one next-sentence pair. */
function tinyExamples(): MaskedExample[] {
  const rng = new Rng(7)
  return [
    [3, 5],
    [9, 10],
  ].map(([s, e], k) => {
    const orig = Array.from({length: 16}, (_, i) => (i === 0 ? 1 : i === 15 ? 2 : 5 + rng.int(VOCAB - 5)))
    const targets: [number, number][] = []
    for (let i = s; i <= e; i++) targets.push([i, orig[i]])
    return {
      ids: orig.map((id, i) => (i >= s && i <= e ? 3 : id)),
      targets,
      spans: [[s, e, 'mask']],
      segments: orig.map((_, j) => (j < 8 ? 0 : 1)),
      next: k === 0,
    } as MaskedExample
  })
}

/** Loss and every gradient (host copies) of one step of `preset` (batch 2 × 16, vocabulary 1000) from seed-1 weights, no dropout, on `backend`. */
async function tinyStep(backend: string, preset: Preset): Promise<Out[]> {
  await tf.setBackend(backend)
  const config = presetConfig(preset, VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})
  const model = SpanBertForPreTraining.init(config, 1)
  const b = toTensors(collate(tinyExamples(), {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings}))
  try {
    const {parts, grads} = lossAndGrads(model, b, EVAL)
    const out = [
      {shape: [], dtype: 'float32', v: [parts[0]], name: 'loss'},
      ...[...grads].map(([name, g]) => ({shape: g.shape, dtype: g.dtype, v: Array.from(g.dataSync()), name})),
    ]
    tf.dispose([...grads.values()])
    return out
  } finally {
    disposeBatch(b)
    model.dispose()
  }
}

/**
 * Runs the self-test; throws SpanError (via initBackend) when cuda does not start. The reference is
 * native where its addon loads, else tfjs' cpu backend.
 */
export async function runSelftest(preset: Preset = 'tiny'): Promise<SelftestReport> {
  let reference = 'native'
  try {
    await initBackend('native', {precision: 'fp32'}) // the fp32 reference, also where the CPU's default is bf16 (native-precision.ts)
  } catch {
    reference = 'cpu'
    await initBackend('cpu')
  }
  const refName = tf.getBackend()
  await initBackend('cuda', {precision: 'fp32'}) // fp32's tolerances below; bf16 products would differ by their rounding (about 2^-9)
  const failedCases: string[] = []
  const rows = await kernelRows(refName, failedCases)
  rows.push(await wmmaSelftestRow(refName)) // bf16 tensor-core attention (selftest-wmma.ts), back at fp32 after
  const want = await tinyStep(refName, preset)
  const got = await tinyStep('cuda', preset)
  rows.push(graphSelftestRow(presetConfig(preset, VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0}), tinyExamples())) // capture and replay (selftest-graph.ts), on cuda as tinyStep left it
  const {err, worst} = stepError(got, want)
  const step = {kernel: `${preset} step (loss + ${want.length - 1} grads; worst ${worst})`, cases: 1, maxRelError: err, ok: err <= STEP_TOLERANCE}
  return {reference, rows, step, failedCases, ok: step.ok && rows.every((r) => r.ok)}
}

/** The table `span doctor --selftest` prints. */
export function selftestTable(r: SelftestReport): string {
  const all = [...r.rows, r.step]
  const w = maxOf(
    all.map((x) => x.kernel.length),
    6,
  )
  const line = (x: SelftestRow) =>
    `${x.kernel.padEnd(w)}  ${String(x.cases).padStart(5)}  ${x.maxRelError.toExponential(2).padStart(9)}  ${x.ok ? 'ok' : 'FAIL'}\n`
  const failed = all.filter((x) => !x.ok).length
  const head = `${'kernel'.padEnd(w)}  cases  max rel err  ok   (cuda vs ${r.reference}; kernels ≤ ${KERNEL_TOLERANCE}, step ≤ ${STEP_TOLERANCE})\n`
  const cases = r.failedCases.map((c) => `failed case ${c}\n`).join('')
  return head + all.map(line).join('') + cases + (failed ? `selftest: ${failed} of ${all.length} FAILED\n` : `selftest: all ${all.length} passed\n`)
}
