// The Span Fine-tuning CNN (Bao et al. §3.2) on hand-built inputs: Conv1d against a direct loop,
// masked max-pooling, the whole module against a loop reference, padding invariance, gradients,
// and the parameter count for `base` from the specs alone (no base weights are allocated).
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification, type HeadConfig} from '../../../src/core/model/classifier.js'
import {presetConfig} from '../../../src/core/model/config.js'
import {ParamStore, normals} from '../../../src/core/model/params.js'
import {type SpanIndex, conv1dSame, maskedMaxPool, spanFtExtraParams, spanFtForward, spanFtSpecs} from '../../../src/core/model/span-ft.js'

beforeAll(async () => {
  await initBackend('cpu')
})

/** PyTorch Conv1d(padding=1) written out: y[n][t][o] = b[o] + Σ_c Σ_j w[o][c][j]·x[n][t+j−1][c]. */
function conv1dLoop(x: number[][][], w: number[][][], b: number[]): number[][][] {
  return x.map((seq) => seq.map((_, t) => b.map((bo, o) => {
    let s = bo
    for (let c = 0; c < w[0].length; c++) {
      for (let j = 0; j < 3; j++) {
        const at = t + j - 1
        if (at >= 0 && at < seq.length) s += w[o][c][j] * seq[at][c]
      }
    }
    return s
  })))
}

/** Masked max over a list of vectors (0 when none is real). */
function maxLoop(rows: number[][], keep: boolean[]): number[] {
  const real = rows.filter((_, i) => keep[i])
  if (real.length === 0) return rows[0].map(() => 0)
  return rows[0].map((_, k) => Math.max(...real.map((r) => r[k])))
}

const relu = (v: number[][]) => v.map((r) => r.map((x) => Math.max(0, x)))

/** §3.2 by loops: per span, conv over its tokens (padding as zeros) → ReLU → max; then the same over spans. */
function spanFtLoop(h: number[][][], idx: SpanIndex, p: Record<string, number[][][] | number[]>): number[][] {
  const H = h[0][0].length
  const T = h[0].length
  return h.map((_, b) => {
    const spans: number[][] = []
    const spanReal: boolean[] = []
    for (let i = 0; i < idx.r; i++) {
      const rows: number[][] = []
      const keep: boolean[] = []
      for (let j = 0; j < idx.l; j++) {
        const at = (b * idx.r + i) * idx.l + j
        keep.push(idx.mask[at] === 1)
        const pos = idx.positions[at]
        rows.push(idx.mask[at] === 1 ? h[Math.floor(pos / T)][pos % T] : new Array(H).fill(0))
      }
      const y = relu(conv1dLoop([rows], p.tw as number[][][], p.tb as number[])[0])
      spans.push(maxLoop(y, keep))
      spanReal.push(keep.some(Boolean))
    }
    const zs = spans.map((s, i) => (spanReal[i] ? s : s.map(() => 0)))
    const y = relu(conv1dLoop([zs], p.sw as number[][][], p.sb as number[])[0])
    return maxLoop(y, spanReal)
  })
}

function randomTensor(shape: number[], rng: Rng): tf.Tensor {
  return tf.tensor(normals(shape.reduce((a, b) => a * b, 1), 1, rng), shape)
}

describe('conv1dSame', () => {
  it('equals PyTorch Conv1d(k=3, padding=1) computed by a direct loop', () => {
    const rng = new Rng(7)
    const x = randomTensor([2, 5, 3], rng)
    const w = randomTensor([4, 3, 3], rng)
    const b = randomTensor([4], rng)
    const got = conv1dSame(x as tf.Tensor3D, w, b)
    expect(got.shape).toEqual([2, 5, 4])
    const want = conv1dLoop(x.arraySync() as number[][][], w.arraySync() as number[][][], b.arraySync() as number[])
    const g = got.arraySync() as number[][][]
    want.forEach((seq, n) => seq.forEach((row, t) => row.forEach((v, o) => expect(g[n][t][o]).toBeCloseTo(v, 4))))
    tf.dispose([x, w, b, got])
  })
})

describe('maskedMaxPool', () => {
  it('ignores padded positions, even when they hold the largest values, and gives 0 for all-padding rows', () => {
    const x = tf.tensor3d([
      [[-5, 1], [-3, 9], [100, 100]], // last position padding
      [[7, 7], [8, 8], [9, 9]], // all padding
    ])
    const mask = tf.tensor2d([[1, 1, 0], [0, 0, 0]])
    const y = maskedMaxPool(x, mask)
    expect(y.shape).toEqual([2, 2])
    expect(y.arraySync()).toEqual([[-3, 9], [0, 0]])
    tf.dispose([x, mask, y])
  })
})

/** A store with the module's parameters for hidden size H, drawn from rng. */
function spanStore(H: number, rng: Rng): ParamStore {
  const p = new ParamStore()
  for (const s of spanFtSpecs(H)) p.set(s.name, randomTensor(s.shape, rng).mul(0.5))
  return p
}

/** B=2, T=6, r=3, l=2: row 0 has spans [1,2] [3,3] [4,5]→cut to l; row 1 has one span [1,3]→[1,2] and two empty. */
function handIndex(T: number): SpanIndex {
  const r = 3
  const l = 2
  const positions = new Int32Array(2 * r * l)
  const mask = new Float32Array(2 * r * l)
  const put = (b: number, i: number, toks: number[]) => toks.forEach((t, j) => {
    positions[(b * r + i) * l + j] = b * T + t
    mask[(b * r + i) * l + j] = 1
  })
  put(0, 0, [1, 2])
  put(0, 1, [3])
  put(0, 2, [4, 5])
  put(1, 0, [1, 2])
  return {r, l, positions, mask}
}

/** The module's earlier behaviour (kept for checkpoints saved with it): padding 1, masked pools. */
const MASKED = {max_spans: 3, max_span_tokens: 2, padding: 1 as const, pool: 'masked' as const}

describe('spanFtForward, masked (checkpoints saved before padding 0)', () => {
  const H = 4
  const T = 6
  it('gives one H-vector per row, equal to the loop reference (padding and empty spans included)', () => {
    const rng = new Rng(11)
    const p = spanStore(H, rng)
    const h = randomTensor([2, T, H], rng)
    const idx = handIndex(T)
    const s = tf.tidy(() => spanFtForward(p, h as tf.Tensor3D, idx, MASKED))
    expect(s.shape).toEqual([2, H])
    const arr = (n: string) => p.get(`span_ft.${n}`).arraySync() as never
    const want = spanFtLoop(h.arraySync() as number[][][], idx, {tw: arr('token_conv.weight'), tb: arr('token_conv.bias'), sw: arr('span_conv.weight'), sb: arr('span_conv.bias')})
    const got = s.arraySync() as number[][]
    want.forEach((row, b) => row.forEach((v, k) => expect(got[b][k]).toBeCloseTo(v, 4)))
    tf.dispose([h, s])
    p.dispose()
  })

  it('does not see tokens outside the spans, and passes gradients to both convolutions', () => {
    const rng = new Rng(12)
    const p = spanStore(H, rng)
    const h = randomTensor([2, T, H], rng)
    const idx = handIndex(T)
    // row 1 uses tokens 1, 2 only: change tokens 0, 3, 4, 5 of row 1 and the [CLS] of row 0
    const noise = tf.tensor3d(Array.from({length: 2}, (_, b) => Array.from({length: T}, (_, t) => new Array(H).fill((b === 1 && t !== 1 && t !== 2) || (b === 0 && t === 0) ? 50 : 0))))
    const a = tf.tidy(() => spanFtForward(p, h as tf.Tensor3D, idx, MASKED))
    const c = tf.tidy(() => spanFtForward(p, h.add(noise) as tf.Tensor3D, idx, MASKED))
    expect(c.arraySync()).toEqual(a.arraySync())
    const vars = p.entries().map(([, v]) => v)
    const {value, grads} = tf.variableGrads(() => spanFtForward(p, h as tf.Tensor3D, idx, MASKED).sum() as tf.Scalar, vars)
    for (const [name, v] of p.entries()) expect(tf.abs(grads[v.name]).sum().dataSync()[0], name).toBeGreaterThan(0)
    tf.dispose([h, noise, a, c, value, ...Object.values(grads)])
    p.dispose()
  })
})

describe('parameter count', () => {
  it('is 2 × (3·H·H + H) plus C·H more classifier weights, for base counted from the specs (no weights allocated)', () => {
    const base = presetConfig('base', 30522)
    const head = (span: boolean): HeadConfig => ({num_labels: 2, labels: ['0', '1'], finetuning_task: 'SST-2', span_ft: span ? {max_spans: 16, max_span_tokens: 8} : null})
    const count = (span: boolean) => BertForSequenceClassification.specs(base, head(span)).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0)
    const extra = count(true) - count(false)
    expect(extra).toBe(2 * (3 * 768 * 768 + 768) + 2 * 768)
    expect(spanFtExtraParams(768, 2)).toEqual({convs: 3_540_480, classifier: 1536, total: 3_542_016})
    expect(extra).toBe(spanFtExtraParams(768, 2).total)
    // the convolutions are in PyTorch Conv1d layout [out, in, k]
    expect(spanFtSpecs(768).map((s) => [s.name, s.shape])).toEqual([
      ['span_ft.token_conv.weight', [768, 768, 3]], ['span_ft.token_conv.bias', [768]],
      ['span_ft.span_conv.weight', [768, 768, 3]], ['span_ft.span_conv.bias', [768]],
    ])
  })
})
