import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {FUSED_KERNELS, runFused} from '../../../src/core/engine/fused-kernels.js'
import {attentionFused, fusedCounts} from '../../../src/core/engine/fused.js'
import {setNativeFlashAttention} from '../../../src/core/engine/native-flash.js'
import {loadNative, nativeAddon, setNativeKernelsEnabled, startNative} from '../../../src/core/engine/native.js'

// The native flash attention (native/src/flash.cc, src/core/engine/native-flash.ts) against the
// kernel that saves the probabilities (native/src/fused.cc attention_forward/backward) and the
// composite tfjs formula (fused-composite.ts, tfjs' own cpu kernels): forward values and the three
// gradients, with and without dropout (the same (seed, index) masks as the probs kernel), padded
// masks, and lengths on both sides of the 64-row block. Skipped only when the addon is not built.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`
const rng = new Rng(20261206)

function rand(shape: number[], lo = -2, hi = 2): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1)
  return tf.tensor(
    Float32Array.from({length: n}, () => lo + (hi - lo) * rng.float()),
    shape,
    'float32',
  )
}

/** An additive padding mask [B, T]: entry b has its last (b·7) mod T keys at −10000 (entry 0 none). */
function paddingMask(B: number, T: number): tf.Tensor2D {
  const m = new Float32Array(B * T)
  for (let b = 0; b < B; b++) for (let t = T - ((b * 7) % T); t < T; t++) if (t > 0) m[b * T + t] = -10000
  return tf.tensor2d(m, [B, T])
}

type Case = {B: number; T: number; A: number; d: number; rate: number; seed: number}

/** [ctx, dq, dk, dv] of attentionFused for Σ ctx·dy, run as `how` says. */
function run(how: 'flash' | 'probs' | 'composite', c: Case, [q, k, v, mask, dy]: tf.Tensor[]): tf.Tensor[] {
  const wasFlash = setNativeFlashAttention(how === 'flash')
  setNativeKernelsEnabled(how !== 'composite')
  try {
    const f = (a: tf.Tensor, b: tf.Tensor, e: tf.Tensor) =>
      attentionFused(a as tf.Tensor3D, b as tf.Tensor3D, e as tf.Tensor3D, mask as tf.Tensor2D, c.A, c.rate, c.seed)
    return tf.tidy(() => [f(q, k, v), ...tf.grads(f)([q, k, v], dy)])
  } finally {
    setNativeFlashAttention(wasFlash)
    setNativeKernelsEnabled(true)
  }
}

/** Largest |got − ref| over max |ref|. */
function relErr(got: tf.Tensor, ref: tf.Tensor): number {
  expect(got.shape).toEqual(ref.shape)
  const [a, b] = [got.dataSync(), ref.dataSync()]
  let [err, scale] = [0, 0]
  for (let i = 0; i < b.length; i++) {
    expect(Number.isFinite(a[i])).toBe(true)
    err = Math.max(err, Math.abs(a[i] - b[i]))
    scale = Math.max(scale, Math.abs(b[i]))
  }
  return err / Math.max(scale, 1e-30)
}

function inputs(c: Case): tf.Tensor[] {
  const H = c.A * c.d
  return [rand([c.B, c.T, H]), rand([c.B, c.T, H]), rand([c.B, c.T, H]), paddingMask(c.B, c.T), rand([c.B, c.T, H])]
}

/** Flash against the probs kernel (and, without dropout, against the composite formula). */
function check(c: Case): void {
  const xs = inputs(c)
  const flash = run('flash', c, xs)
  const probs = run('probs', c, xs)
  const refs: [string, tf.Tensor[]][] = [['probs kernel', probs]]
  if (c.rate === 0) refs.push(['composite', run('composite', c, xs)]) // tf.dropout's masks differ from native's
  try {
    for (const [who, ref] of refs)
      ['ctx', 'dq', 'dk', 'dv'].forEach((n, i) => expect(relErr(flash[i], ref[i]), `${JSON.stringify(c)} ${n} vs ${who}`).toBeLessThan(i === 0 ? 2e-6 : 2e-5))
  } finally {
    tf.dispose([...xs, ...refs.flatMap(([, r]) => r), ...flash])
  }
}

describe(`native flash attention${reason}`, () => {
  beforeAll(async () => {
    if (status.available) expect(await startNative()).toBeNull()
  })

  it.skipIf(!status.available)('is built and runs natively, saving lse [B, A, T] and no [B, A, T, T] tensor', () => {
    expect(typeof (nativeAddon() as unknown as Record<string, unknown>).flashAttentionForward).toBe('function')
    const [q, k, v, mask] = inputs({B: 2, T: 70, A: 3, d: 8, rate: 0, seed: 0})
    const before = fusedCounts().attention
    const [ctx, lse] = runFused(FUSED_KERNELS.attention, {q, k, v, mask}, {heads: 3, rate: 0, seed: 0}) as tf.Tensor[]
    expect(fusedCounts().attention).toBe(before + 1)
    expect(ctx.shape).toEqual([2, 70, 24])
    expect(lse.shape).toEqual([2, 3, 70])
    tf.dispose([q, k, v, mask, ctx, lse])
  })

  it.skipIf(!status.available)('equals the probs kernel and the composite without dropout, T around and across the block', () => {
    for (const [B, T, A, d] of [
      [1, 1, 1, 1],
      [2, 7, 3, 5],
      [2, 63, 2, 16],
      [3, 64, 2, 8],
      [2, 65, 3, 8],
      [2, 150, 2, 32],
      [1, 200, 1, 64],
    ])
      check({B, T, A, d, rate: 0, seed: 0})
  })

  it.skipIf(!status.available)('equals the probs kernel with dropout: the same (seed, index) masks', () => {
    for (const [B, T, A, d, seed] of [
      [2, 19, 3, 4, 1],
      [2, 130, 2, 16, 987654321],
      [1, 64, 4, 8, 5],
    ])
      check({B, T, A, d, rate: 0.25, seed})
  })

  it.skipIf(!status.available)('a dropout mask really applies (the output differs from rate 0)', () => {
    const c = {B: 2, T: 70, A: 2, d: 8, rate: 0.3, seed: 11}
    const xs = inputs(c)
    const [dropped, plain] = [run('flash', c, xs), run('flash', {...c, rate: 0}, xs)]
    expect(relErr(dropped[0], plain[0])).toBeGreaterThan(1e-2)
    tf.dispose([...xs, ...dropped, ...plain])
  })

  it.skipIf(!status.available)('leaves no tensor behind, forward and backward, with and without dropout', () => {
    for (const rate of [0, 0.1]) {
      const c = {B: 2, T: 66, A: 2, d: 8, rate, seed: 3}
      const xs = inputs(c)
      run('flash', c, xs).forEach((t) => t.dispose()) // warm-up (kernel registration)
      const before = tf.memory().numTensors
      for (let i = 0; i < 3; i++) tf.dispose(run('flash', c, xs))
      expect(tf.memory().numTensors).toBe(before)
      tf.dispose(xs)
    }
  })

  it.skipIf(!status.available)('the composite gradient takes a flash lse (recomputes P), e.g. with the kernels switched off for the backward', () => {
    const c = {B: 2, T: 40, A: 2, d: 4, rate: 0, seed: 0}
    const [q, k, v, mask, dy] = inputs(c)
    const attrs = {heads: 2, rate: 0, seed: 0}
    const [ctx, lse] = runFused(FUSED_KERNELS.attention, {q, k, v, mask}, attrs) as tf.Tensor[]
    const nat = runFused(FUSED_KERNELS.attentionGrad, {dy, q, k, v, probs: lse, ctx, mask}, attrs) as tf.Tensor[]
    setNativeKernelsEnabled(false)
    const comp = runFused(FUSED_KERNELS.attentionGrad, {dy, q, k, v, probs: lse, ctx, mask}, attrs) as tf.Tensor[]
    setNativeKernelsEnabled(true)
    nat.forEach((g, i) => expect(relErr(comp[i], g)).toBeLessThan(2e-5))
    tf.dispose([q, k, v, mask, dy, ctx, lse, ...nat, ...comp])
  })
})
