import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {attentionFused, crossEntropySumFused, dropoutFused, fusedCounts, layerNormFused, linearFused, sumSquaresFused} from '../../../src/core/engine/fused.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {nativeActive} from '../../../src/core/engine/native-ops.js'
import {loadNative, setNativeKernelsEnabled, startNative} from '../../../src/core/engine/native.js'

// The fused layers of the native backend (src/core/engine/fused.ts, native/src/fused.cc)
// against the composite tfjs formulas they replace (src/core/model/layers.ts, loss.ts),
// computed with the native kernels off, i.e. by tfjs' own cpu kernels: forward values and the
// gradient w.r.t. every input, on seeded random inputs. Skipped only when the addon is not built.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

const rng = new Rng(20240611)

/** Uniform floats in [lo, hi) of a shape, from the seeded generator. */
function rand(shape: number[], lo = -2, hi = 2): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1)
  return tf.tensor(Float32Array.from({length: n}, () => lo + (hi - lo) * rng.float()), shape, 'float32')
}

/** n labels in [0, C), the first 0 and the last C−1 (where n allows). */
function labelsFor(n: number, C: number): tf.Tensor1D {
  const v = Int32Array.from({length: n}, () => rng.int(C))
  if (n > 0) v[0] = 0
  if (n > 1) v[n - 1] = C - 1
  return tf.tensor1d(v, 'int32')
}

/** f run by tfjs' own cpu kernels (the native kernels off, back on afterwards). */
function onReferenceKernels<T extends tf.TensorContainer>(f: () => T): T {
  setNativeKernelsEnabled(false)
  try {
    return tf.tidy(f)
  } finally {
    setNativeKernelsEnabled(true)
  }
}

/** Same shape; every entry within rtol·max|ref| + atol (NaN/Inf not expected here). */
function expectClose(got: tf.Tensor, ref: tf.Tensor, rtol: number, what: string, atol = 1e-7): void {
  expect(got.shape, `${what}: shape`).toEqual(ref.shape)
  const a = got.dataSync()
  const b = ref.dataSync()
  let scale = 0
  for (const v of b) scale = Math.max(scale, Math.abs(v))
  let worst = -1
  let worstErr = 0
  for (let j = 0; j < b.length; j++) {
    expect(Number.isFinite(a[j]), `${what}[${j}] = ${a[j]} is not finite`).toBe(true)
    const err = Math.abs(a[j] - b[j])
    if (err > worstErr) [worst, worstErr] = [j, err]
  }
  const tol = rtol * scale + atol
  if (worstErr > tol) {
    expect.fail(`${what}: [${worst}] fused ${a[worst]} vs composite ${b[worst]} (|Δ| ${worstErr.toExponential(3)} > ${tol.toExponential(3)}, max|ref| ${scale.toExponential(3)})`)
  }
}

/** y = f(...xs) and the gradient of Σ y·dy w.r.t. every input: [y, ...grads]. */
function valueAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[], dy: tf.Tensor): tf.Tensor[] {
  return tf.tidy(() => [f(...xs), ...tf.grads((...a: tf.Tensor[]) => f(...a))(xs, dy)])
}

/**
 * Compares fused (native kernels on) with composite (tfjs' kernels) on the same inputs and
 * upstream weighting: values to 1e-5 of their max |·|, gradients to 1e-4.
 */
function compare(what: string, fused: (...xs: tf.Tensor[]) => tf.Tensor | null, composite: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[], dy: tf.Tensor, names: string[]): void {
  const f = (...a: tf.Tensor[]) => {
    const y = fused(...a)
    if (!y) throw new Error(`${what}: the fused op declined to run`)
    return y
  }
  const got = valueAndGrads(f, xs, dy)
  const ref = onReferenceKernels(() => valueAndGrads(composite, xs, dy))
  // the same op with the native kernels off: its composite kernels (fused-composite.ts)
  const kernels = onReferenceKernels(() => valueAndGrads(f, xs, dy))
  try {
    for (const [out, who] of [[got, 'fused'], [kernels, 'composite kernel']] as const) {
      expect(out.length).toBe(names.length + 1)
      expectClose(out[0], ref[0], 1e-5, `${what} ${who} value`)
      names.forEach((n, i) => expectClose(out[i + 1], ref[i + 1], 1e-4, `${what} ${who} d${n}`))
    }
  } finally {
    tf.dispose([...got, ...ref, ...kernels])
  }
}

// The composite formulas, as src/core/model/layers.ts, bert.ts and loss.ts write them.
/** BertSelfAttention after the projections: q, k, v [B, T, H], maskAdd [B, T] → [B, T, H]. */
function attentionRef(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, maskAdd: tf.Tensor, A: number, drop?: (p: tf.Tensor) => tf.Tensor): tf.Tensor {
  const [B, T, H] = q.shape
  const d = H / A
  const heads = (t: tf.Tensor, perm: number[]) => t.reshape([B, T, A, d]).transpose(perm)
  const scores = tf.matMul(heads(q, [0, 2, 1, 3]), heads(k, [0, 2, 3, 1])).mul(1 / Math.sqrt(d)).add(maskAdd.reshape([B, 1, 1, T]))
  const probs = tf.softmax(scores, -1)
  const ctx = tf.matMul(drop ? drop(probs) : probs, heads(v, [0, 2, 1, 3]))
  return ctx.transpose([0, 2, 1, 3]).reshape([B, T, H])
}

/** An additive padding mask [B, T]: the last `pad[b]` keys of entry b at −10000. */
function paddingMask(B: number, T: number): tf.Tensor2D {
  const m = new Float32Array(B * T)
  for (let b = 0; b < B; b++) for (let t = T - (b % 3); t < T; t++) if (t > 0) m[b * T + t] = -10000
  return tf.tensor2d(m, [B, T])
}

function linearRef(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor, act: 'linear' | 'gelu'): tf.Tensor {
  const y = x.matMul(w.transpose()).add(b)
  return act === 'gelu' ? y.mul(tf.erf(y.mul(Math.SQRT1_2)).add(1).mul(0.5)) : y
}

function layerNormRef(x: tf.Tensor, g: tf.Tensor, b: tf.Tensor, eps: number): tf.Tensor {
  const {mean, variance} = tf.moments(x, -1, true)
  return x.sub(mean).mul(tf.rsqrt(variance.add(eps))).mul(g).add(b)
}

function crossEntropyRef(logits: tf.Tensor, labels: tf.Tensor1D): tf.Tensor {
  // −Σ_n logSoftmax(logits)[n, labels[n]], the label picked by a 0/1 mask (tf.oneHot wants C ≥ 2
  // and tf.gather's gradient fails on N = 0; the mask is constant, so the gradient is the same)
  const C = logits.shape[1]!
  const mask = tf.equal(tf.range(0, C, 1, 'int32').expandDims(0), labels.expandDims(1)).toFloat() // [N, C]
  return tf.logSoftmax(logits, -1).mul(mask).sum().neg()
}

type Act = 'linear' | 'gelu'
const ACTS: Act[] = ['linear', 'gelu']

function checkLinear(what: string, x: tf.Tensor, out: number, act: Act, view?: (x: tf.Tensor) => tf.Tensor): void {
  const v = view ?? ((t: tf.Tensor) => t)
  const xin = v(x)
  const [N, inF] = xin.shape
  const w = rand([out, inF], -1, 1)
  const b = rand([out], -1, 1)
  const dy = rand([N, out])
  compare(
    `linear ${act} ${what} N=${N} in=${inF} out=${out}`,
    (xx, ww, bb) => linearFused(v(xx) as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D, act),
    (xx, ww, bb) => linearRef(v(xx), ww, bb, act),
    [x, w, b],
    dy,
    ['x', 'w', 'b'],
  )
  tf.dispose([xin, w, b, dy])
}

function checkLayerNorm(what: string, x: tf.Tensor, eps: number, view?: (x: tf.Tensor) => tf.Tensor): void {
  const v = view ?? ((t: tf.Tensor) => t)
  const xin = v(x)
  const H = xin.shape[xin.rank - 1]
  const g = rand([H], 0.5, 1.5)
  const b = rand([H], -1, 1)
  const dy = rand(xin.shape)
  compare(
    `layerNorm ${what} [${xin.shape}] eps=${eps}`,
    (xx, gg, bb) => layerNormFused(v(xx), gg as tf.Tensor1D, bb as tf.Tensor1D, eps),
    (xx, gg, bb) => layerNormRef(v(xx), gg, bb, eps),
    [x, g, b],
    dy,
    ['x', 'g', 'b'],
  )
  tf.dispose([xin, g, b, dy])
}

function checkCrossEntropy(what: string, logits: tf.Tensor, labels: tf.Tensor1D, dyValue: number): void {
  const dy = tf.scalar(dyValue)
  compare(
    `crossEntropy ${what} [${logits.shape}] dy=${dyValue}`,
    (l) => crossEntropySumFused(l as tf.Tensor2D, labels),
    (l) => crossEntropyRef(l, labels),
    [logits],
    dy,
    ['logits'],
  )
  dy.dispose()
}

describe.skipIf(!status.available)(`fused native layers agree with the composite tfjs formulas${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
    expect(tf.getBackend()).toBe('cpu')
    expect(nativeActive()).toBe(true)
  })

  it('linear: odd N, in and out, both activations', () => {
    for (const act of ACTS) {
      for (const N of [1, 7, 33]) {
        for (const inF of [1, 5, 130]) {
          for (const out of [1, 5, 130]) {
            const x = rand([N, inF])
            checkLinear('', x, out, act)
            x.dispose()
          }
        }
      }
    }
  })

  it('linear: large enough to split over the pool; large pre-activations for GeLU', () => {
    for (const act of ACTS) {
      const x = rand([300, 130])
      checkLinear('pool', x, 257, act)
      x.dispose()
      const big = rand([9, 17], -8, 8) // z well into both GeLU tails
      checkLinear('wide', big, 11, act)
      big.dispose()
    }
  })

  it('linear: x from a transpose, a contiguous slice and a strided slice', () => {
    for (const act of ACTS) {
      const t = rand([5, 7]) // x = tᵀ [7, 5]
      checkLinear('transposed', t, 130, act, (s) => tf.transpose(s))
      const rows = rand([40, 130]) // rows 3..35: a subarray view of the storage
      checkLinear('row slice', rows, 5, act, (s) => tf.slice(s, [3, 0], [33, 130]))
      const cols = rand([7, 9]) // columns 2..6: a copy
      checkLinear('column slice', cols, 1, act, (s) => tf.slice(s, [0, 2], [7, 5]))
      // the view taken outside the differentiated function: x itself is a view
      const view = tf.slice(rows, [1, 0], [7, 130])
      checkLinear('given view', view, 33, act)
      tf.dispose([t, rows, cols, view])
    }
  })

  it('linear: N = 0 gives [0, out] and zero gradients for w and b', () => {
    for (const act of ACTS) {
      // buffers of the same lengths were just used and pooled: garbage must not leak into dw, db
      const warm = rand([7, 5])
      checkLinear('warm', warm, 3, act)
      warm.dispose()
      const x = tf.zeros([0, 5])
      const w = rand([3, 5])
      const b = rand([3])
      const y = linearFused(x as tf.Tensor2D, w as tf.Tensor2D, b as tf.Tensor1D, act)!
      expect(y.shape).toEqual([0, 3])
      const [dx, dw, db] = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => linearFused(xx as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D, act)!)([x, w, b], tf.zeros([0, 3]))
      expect(dx.shape).toEqual([0, 5])
      expect(dw.shape).toEqual([3, 5])
      expect(db.shape).toEqual([3])
      expect(Array.from(dw.dataSync())).toEqual(new Array(15).fill(0))
      expect(Array.from(db.dataSync())).toEqual([0, 0, 0])
      checkLinear('empty', x, 3, act) // and the composite agrees
      tf.dispose([x, w, b, y, dx, dw, db])
    }
  })

  it('layerNorm: odd rows and widths, 3-D x, both epsilons', () => {
    for (const eps of [1e-12, 1e-5]) {
      for (const shape of [[1, 5], [7, 130], [33, 3], [1, 768], [3, 7, 130], [2, 5, 33], [4, 1, 3, 7]]) {
        const x = rand(shape, -1, 5) // mean away from 0
        checkLayerNorm('', x, eps)
        x.dispose()
      }
    }
  })

  it('layerNorm: large enough to split over the pool, a constant row, an empty batch', () => {
    const x = rand([600, 130])
    checkLayerNorm('pool', x, 1e-12)
    const c = tf.concat([tf.fill([1, 5], 0.5), rand([3, 5])]) // row 0: zero variance, exactly representable mean
    checkLayerNorm('constant row', c, 1e-5)
    const e = tf.zeros([0, 5])
    checkLayerNorm('empty', e, 1e-12)
    const e3 = tf.zeros([2, 0, 7])
    checkLayerNorm('empty 3-D', e3, 1e-12)
    tf.dispose([x, c, e, e3])
  })

  it('layerNorm: H = 1 (x̂ ≡ 0): y = b, dg = 0, db = Σ dy, dx exactly 0 (no FMA keeps a rounding error for rstd to magnify)', () => {
    for (const eps of [1e-12, 1e-5]) {
      const x = rand([33, 1], -1, 5)
      const g = rand([1], 0.5, 1.5)
      const b = rand([1], -1, 1)
      const dy = rand([33, 1])
      const f = (xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => layerNormFused(xx, gg as tf.Tensor1D, bb as tf.Tensor1D, eps)!
      const [y, dx, dg, db] = tf.tidy(() => [f(x, g, b), ...tf.grads(f)([x, g, b], dy)])
      const dyv = dy.dataSync()
      expect(Array.from(y.dataSync())).toEqual(new Array(33).fill(b.dataSync()[0]))
      expect(dg.dataSync()[0]).toBe(0)
      expect(Math.abs(db.dataSync()[0] - Array.from(dyv).reduce((a, v) => a + v, 0))).toBeLessThan(1e-5)
      expect(Array.from(dx.dataSync())).toEqual(new Array(33).fill(0))
      tf.dispose([x, g, b, dy, y, dx, dg, db])
    }
  })

  it('pool-sized results are bitwise the same from run to run', () => {
    const x = rand([600, 130])
    const w = rand([257, 130], -1, 1)
    const b = rand([257])
    const g = rand([130])
    const logits = rand([300, 300], -5, 5)
    const labels = labelsFor(300, 300)
    const once = () =>
      tf.tidy(() => [
        ...tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => linearFused(xx as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D, 'gelu')!)([x, w, b]),
        ...tf.grads((xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => layerNormFused(xx, gg as tf.Tensor1D, bb as tf.Tensor1D, 1e-12)!)([x, g, g]),
        ...Object.values(tf.valueAndGrad((l: tf.Tensor) => crossEntropySumFused(l as tf.Tensor2D, labels)!)(logits)),
      ])
    const a = once()
    for (let k = 0; k < 3; k++) {
      const c = once()
      c.forEach((t, i) => expect(Buffer.from(t.dataSync().buffer, t.dataSync().byteOffset, t.dataSync().byteLength).equals(Buffer.from(a[i].dataSync().buffer, a[i].dataSync().byteOffset, a[i].dataSync().byteLength)), `output ${i}, run ${k}`).toBe(true))
      tf.dispose(c)
    }
    tf.dispose([...a, x, w, b, g, logits, labels])
  })

  it('layerNorm: x from a transpose and slices', () => {
    const t = rand([130, 7])
    checkLayerNorm('transposed', t, 1e-12, (s) => tf.transpose(s))
    const t3 = rand([2, 33, 5])
    checkLayerNorm('transposed 3-D', t3, 1e-12, (s) => tf.transpose(s, [0, 2, 1]))
    const rows = rand([40, 33])
    checkLayerNorm('row slice', rows, 1e-12, (s) => tf.slice(s, [5, 0], [7, 33]))
    const cols = rand([7, 40])
    checkLayerNorm('column slice', cols, 1e-12, (s) => tf.slice(s, [0, 3], [7, 33]))
    const view = tf.slice(rows, [1, 0], [33, 33])
    checkLayerNorm('given view', view, 1e-12)
    tf.dispose([t, t3, rows, cols, view])
  })

  it('crossEntropy: odd sizes, labels at 0 and C−1, upstream scale', () => {
    for (const [N, C] of [[1, 1], [1, 5], [7, 5], [7, 2], [33, 130], [5, 1000]]) {
      for (const dy of [1, 0.37, -2.5]) {
        const logits = rand([N, C], -3, 3)
        const labels = labelsFor(N, C)
        checkCrossEntropy('', logits, labels, dy)
        tf.dispose([logits, labels])
      }
    }
  })

  it('crossEntropy: logits of ±80, a pool-sized batch, an empty batch, a transposed view', () => {
    const big = rand([33, 130], -80, 80)
    const bl = labelsFor(33, 130)
    checkCrossEntropy('±80', big, bl, 1)
    // every row's label on its smallest logit: losses near 160, probabilities near 0 and 1
    const sharp = tf.tensor2d([[80, -80, 0, 79.5], [-80, 80, -80, 80], [-80, -80, -80, -80]])
    checkCrossEntropy('±80 extreme', sharp, tf.tensor1d([1, 0, 3], 'int32'), 0.5)
    const pool = rand([300, 300], -5, 5)
    checkCrossEntropy('pool', pool, labelsFor(300, 300), 1)
    const empty = tf.zeros([0, 5])
    checkCrossEntropy('empty', empty, tf.tensor1d([], 'int32'), 1)
    const t = rand([130, 7], -10, 10)
    const tl = labelsFor(7, 130)
    const x = tf.transpose(t)
    checkCrossEntropy('transposed', x, tl, 1)
    tf.dispose([big, bl, sharp, pool, empty, t, tl, x])
  })

  it('crossEntropy: a label outside [0, C) throws', () => {
    const logits = rand([4, 5])
    const before = tf.memory().numTensors
    for (const bad of [5, -1, 1000]) {
      const labels = tf.tensor1d([0, 4, bad, 2], 'int32')
      expect(() => crossEntropySumFused(logits as tf.Tensor2D, labels)).toThrow(/outside/)
      expect(() => tf.grad((l: tf.Tensor) => crossEntropySumFused(l as tf.Tensor2D, labels)!)(logits)).toThrow(/outside/)
      labels.dispose()
    }
    expect(tf.memory().numTensors).toBe(before)
    logits.dispose()
  })

  it('sumSquares: several tensors of different sizes, one over 100k elements, against a float64 sum', () => {
    const base = rand([50, 40])
    const ts = [rand([]), rand([0]), rand([1]), rand([7, 13]), rand([401, 301], -3, 3), rand([5, 130]), tf.slice(base, [10, 0], [20, 40]), tf.transpose(rand([33, 5]))]
    expect(ts[4].size).toBeGreaterThan(100_000)
    let exact = 0
    for (const t of ts) for (const v of t.dataSync()) exact += v * v
    const got = sumSquaresFused(ts)
    expect(got).not.toBeNull()
    expect(Math.abs(got! - exact)).toBeLessThanOrEqual(1e-5 * exact)
    // one at a time, the large one alone, and none at all
    for (const t of ts) {
      let e = 0
      for (const v of t.dataSync()) e += v * v
      expect(Math.abs(sumSquaresFused([t])! - e)).toBeLessThanOrEqual(1e-5 * e + 1e-12)
    }
    expect(sumSquaresFused([])).toBe(0)
    // values whose squares span many magnitudes
    const wide = tf.tensor1d(Float32Array.from({length: 3001}, (_, i) => (rng.float() - 0.5) * 10 ** ((i % 7) - 3)))
    let ew = 0
    for (const v of wide.dataSync()) ew += v * v
    expect(Math.abs(sumSquaresFused([wide])! - ew)).toBeLessThanOrEqual(1e-5 * ew)
    tf.dispose([base, wide, ...ts])
  })

  it('attention: odd batch, length, heads and head size, padding masked, no dropout', () => {
    for (const [B, T, A, d] of [[1, 1, 1, 1], [2, 7, 3, 5], [3, 33, 4, 8], [2, 128, 2, 64]]) {
      const [q, k, v] = [0, 1, 2].map(() => rand([B, T, A * d]))
      const mask = paddingMask(B, T)
      const dy = rand([B, T, A * d])
      compare(`attention ${B}x${T} ${A}x${d}`, (a, b, c) => attentionFused(a as tf.Tensor3D, b as tf.Tensor3D, c as tf.Tensor3D, mask, A, 0, 0),
        (a, b, c) => attentionRef(a, b, c, mask, A), [q, k, v], dy, ['q', 'k', 'v'])
      tf.dispose([q, k, v, mask, dy])
    }
  })

  it('attention with dropout: the same masks as dropoutFast on the probabilities, values and gradients', () => {
    const [B, T, A, d] = [2, 19, 3, 4]
    const [q, k, v] = [0, 1, 2].map(() => rand([B, T, A * d]))
    const mask = paddingMask(B, T)
    const dy = rand([B, T, A * d])
    for (const seed of [1, 987654321]) {
      const got = valueAndGrads((a, b, c) => attentionFused(a as tf.Tensor3D, b as tf.Tensor3D, c as tf.Tensor3D, mask, A, 0.25, seed)!, [q, k, v], dy)
      const ref = valueAndGrads((a, b, c) => attentionRef(a, b, c, mask, A, (p) => dropoutFused(p, 0.25, seed)), [q, k, v], dy)
      const zeroed = tf.tidy(() => attentionFused(q as tf.Tensor3D, k as tf.Tensor3D, v as tf.Tensor3D, mask, A, 0, 0)!.sub(got[0]).abs().max().dataSync()[0])
      expect(zeroed).toBeGreaterThan(1e-3) // dropout did change the output
      ;['value', 'dq', 'dk', 'dv'].forEach((n, i) => expectClose(got[i], ref[i], i === 0 ? 1e-5 : 1e-4, `attention dropout seed ${seed} ${n}`))
      tf.dispose([...got, ...ref])
    }
    tf.dispose([q, k, v, mask, dy])
  })

  it('no tensor is left behind by values and gradients of each op', () => {
    const x = rand([7, 5])
    const wv = tf.variable(rand([3, 5]))
    const bv = tf.variable(rand([3]))
    const x3 = rand([2, 7, 5])
    const g = rand([5])
    const bn = rand([5])
    const logits = rand([7, 5])
    const labels = labelsFor(7, 5)
    // each run returns every tensor it made (values and gradients) for the caller to dispose
    const runs: [string, () => tf.Tensor[]][] = [
      ...ACTS.map((act): [string, () => tf.Tensor[]] => [
        `linear ${act}`,
        () => {
          const f = (xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => linearFused(xx as tf.Tensor2D, ww as tf.Tensor2D, bb as tf.Tensor1D, act)!
          const y = f(x, wv, bv)
          const dy = tf.onesLike(y)
          const grads = tf.grads(f)([x, wv, bv], dy)
          const vg = tf.variableGrads(() => tf.sum(f(x, wv, bv)) as tf.Scalar, [wv, bv])
          return [y, dy, ...grads, vg.value, ...Object.values(vg.grads)]
        },
      ]),
      [
        'layerNorm',
        () => {
          const f = (xx: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => layerNormFused(xx, gg as tf.Tensor1D, bb as tf.Tensor1D, 1e-12)!
          const y = f(x3, g, bn)
          const dy = tf.onesLike(y)
          return [y, dy, ...tf.grads(f)([x3, g, bn], dy)]
        },
      ],
      [
        'crossEntropy',
        () => {
          const f = (l: tf.Tensor) => crossEntropySumFused(l as tf.Tensor2D, labels)!
          const {value, grad} = tf.valueAndGrad(f)(logits)
          return [f(logits), value, grad]
        },
      ],
    ]
    for (const [name, run] of runs) {
      tf.dispose(run()) // a first call, so that nothing set up once is counted
      const before = tf.memory().numTensors
      tf.tidy(() => {
        tf.dispose(run())
      })
      expect(tf.memory().numTensors, `${name} inside tf.tidy`).toBe(before)
      tf.dispose(run())
      expect(tf.memory().numTensors, `${name} disposed by hand`).toBe(before)
    }
    const before = tf.memory().numTensors
    expect(sumSquaresFused([x, wv, bv])).not.toBeNull()
    expect(tf.memory().numTensors).toBe(before)
    tf.dispose([x, wv, bv, x3, g, bn, logits, labels])
  })

  it('each op refuses a dtype it does not take, in one line', () => {
    const xi = tf.ones([3, 5], 'int32')
    const w = rand([2, 5]) as tf.Tensor2D
    const b = rand([2]) as tf.Tensor1D
    const g = rand([5]) as tf.Tensor1D
    const logits = rand([3, 5]) as tf.Tensor2D
    const floatLabels = tf.tensor1d([0, 1, 2], 'float32')
    expect(() => linearFused(xi as tf.Tensor2D, w, b, 'linear')).toThrow(/linear: expected a float32 tensor, got int32/)
    expect(() => layerNormFused(xi, g, g, 1e-12)).toThrow(/layerNorm: expected a float32/)
    expect(() => crossEntropySumFused(logits, floatLabels)).toThrow(/labels: expected a int32 tensor, got float32/)
    expect(() => sumSquaresFused([w, xi])).toThrow(/sumSquares: expected a float32/)
    tf.dispose([xi, w, b, g, logits, floatLabels])
  })

  // last: it switches the backend away and back
  it.each(['wasm', 'cpu'] as const)('off the native backend (%s, even with the addon loaded) each op runs its composite kernel, and natively again once native is restored', async (other) => {
    const x = rand([7, 5]) as tf.Tensor2D
    const w = rand([3, 5]) as tf.Tensor2D
    const b = rand([3]) as tf.Tensor1D
    const g = rand([5]) as tf.Tensor1D
    const labels = tf.tensor1d([0, 1, 2, 3, 4, 0, 1], 'int32')
    const values = () =>
      tf.tidy(() => [
        linearFused(x, w, b, 'linear'),
        linearFused(x, w, b, 'gelu'),
        layerNormFused(x, g, g, 1e-12),
        crossEntropySumFused(x, labels),
        tf.scalar(sumSquaresFused([x, w, b])),
      ])
    const natively = values()
    const before = fusedCounts()
    let elsewhere: tf.Tensor[] = []
    try {
      await initBackend(other)
      expect(tf.getBackend()).toBe(other)
      expect(nativeActive()).toBe(false)
      elsewhere = values().map((t) => tf.tensor(t.dataSync(), t.shape)) // read before the backend changes back
      expect(fusedCounts()).toEqual(before) // the addon took no part
    } finally {
      expect(await startNative()).toBeNull()
    }
    natively.forEach((t, i) => expectClose(elsewhere[i], t, 1e-5, `${other} op ${i}`))
    expect(tf.getBackend()).toBe('cpu')
    expect(nativeActive()).toBe(true)
    const y = linearFused(x, w, b, 'gelu')
    expect(fusedCounts().linear).toBe(before.linear + 1)
    expect(y.shape).toEqual([7, 3])
    tf.dispose([x, w, b, g, labels, y, ...natively, ...elsewhere])
  })
})
