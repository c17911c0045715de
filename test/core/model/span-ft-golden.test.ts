// The span CNN against the reference's modules (fixtures/span-ft/golden.json, written by
// tools/make-spanft-goldens.py from BAORONGZHOU/span-fine-tuning@bca4358 modeling.py's
// CNN_conv1d / ChunkLevelFeatureEncoderMultiCnn / ChunkLevelFeatureEncoderNERCNN in PyTorch):
// forward outputs and the gradients of sum(out · w) for the input and every parameter, with
// padding 0 (the reference) and 1 (our option), and the token-level (NER) variant.
import * as tf from '@tensorflow/tfjs'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {ParamStore} from '../../../src/core/model/params.js'
import {type TokenSpan, spanIndex} from '../../../src/core/model/span-index.js'
import {type SpanFtConfig, maxPoolFirst, spanFtForward, spanFtTokenForward} from '../../../src/core/model/span-ft.js'

interface Case {
  h: number[]
  params: Record<'tw' | 'tb' | 'sw' | 'sb', number[]>
  out: number[]
  out_shape: number[]
  loss_weight: number[]
  grad_h: number[]
  grad_params: Record<'tw' | 'tb' | 'sw' | 'sb', number[] | null>
}
const G = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'fixtures', 'span-ft', 'golden.json'), 'utf8'))
const {B, T, H, r, l} = G as {B: number; T: number; H: number; r: number; l: number}
const NAMES = {tw: 'token_conv.weight', tb: 'token_conv.bias', sw: 'span_conv.weight', sb: 'span_conv.bias'} as const

/** The reference's chunk lengths (laid from position 0, zeros for no chunk) as token spans. */
function spansOf(lens: number[]): TokenSpan[] {
  const out: TokenSpan[] = []
  let at = 0
  for (const n of lens.filter((x) => x > 0)) {
    out.push([at, at + n - 1])
    at += n
  }
  return out
}

function close(got: ArrayLike<number>, want: number[], what: string): void {
  expect(got.length, what).toBe(want.length)
  for (let i = 0; i < want.length; i++)
    expect(Math.abs(got[i] - want[i]), `${what}[${i}]: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(want[i])))
}

/** Forward and gradients of sum(out · w) of one case; `forward` maps (store, h) to the output. */
function check(c: Case, forward: (p: ParamStore, h: tf.Tensor3D) => tf.Tensor, names: (keyof typeof NAMES)[]): void {
  const p = new ParamStore()
  const shapes = {tw: [H, H, 3], tb: [H], sw: [H, H, 3], sb: [H]}
  for (const k of names) p.set(`span_ft.${NAMES[k]}`, tf.tensor(c.params[k], shapes[k]))
  const h = tf.variable(tf.tensor3d(c.h, [B, T, H]))
  const before = tf.memory().numTensors
  const out = tf.tidy(() => forward(p, h))
  expect(out.shape).toEqual(c.out_shape.length === 3 ? [B * T, H] : c.out_shape)
  close(out.dataSync(), c.out, 'out')
  const vars = [...p.entries().map(([, v]) => v), h]
  const {value, grads} = tf.variableGrads(() => forward(p, h).reshape([-1]).mul(tf.tensor1d(c.loss_weight)).sum() as tf.Scalar, vars)
  close(grads[h.name].dataSync(), c.grad_h, 'grad h')
  for (const k of names) close(grads[p.get(`span_ft.${NAMES[k]}`).name].dataSync(), c.grad_params[k] as number[], `grad ${k}`)
  tf.dispose([out, value, ...Object.values(grads)])
  expect(tf.memory().numTensors).toBe(before)
  h.dispose()
  p.dispose()
}

beforeAll(async () => {
  await initBackend('cpu')
})

describe('span CNN = the reference (fixtures/span-ft/golden.json)', () => {
  const idx = (tokenSlots: boolean) => spanIndex((G.chunk_lens as number[][]).map(spansOf), T, r, l, tokenSlots)
  const sf = (padding: 0 | 1): SpanFtConfig => ({max_spans: r, max_span_tokens: l, padding, pool: 'reference', cls: 'raw', segmentation: 'dict'})

  it('sentence level, padding 0 (CNN_conv1d / ChunkLevelFeatureEncoderMultiCnn): a span shorter than the kernel, a span cut at l, empty spans', () => {
    check(G.sentence_padding0, (p, h) => spanFtForward(p, h, idx(false), sf(0)), ['tw', 'tb', 'sw', 'sb'])
  })

  it('sentence level, padding 1 (our option), every position pooled as the reference pools', () => {
    check(G.sentence_padding1, (p, h) => spanFtForward(p, h, idx(false), sf(1)), ['tw', 'tb', 'sw', 'sb'])
  })

  it('token level (NER_CNN / ChunkLevelFeatureEncoderNERCNN): padding 1, no pool, 0 outside every span', () => {
    check(G.token, (p, h) => spanFtTokenForward(p, h, idx(true)), ['tw', 'tb'])
  })
})

describe('maxPoolFirst', () => {
  it("routes the gradient to the first maximal position, as PyTorch's max_pool1d, also over one position", () => {
    const x = tf.tensor3d([
      [
        [1, 5],
        [3, 5],
        [3, 2],
      ],
    ]) // [1, 3, 2]: channel 0 ties at 1 and 2, channel 1 at 0 and 1
    const g = tf.grad((t: tf.Tensor) =>
      maxPoolFirst(t as tf.Tensor3D)
        .mul(tf.tensor2d([[2, 7]]))
        .sum(),
    )(x)
    expect(g.arraySync()).toEqual([
      [
        [0, 7],
        [2, 0],
        [0, 0],
      ],
    ])
    const one = tf.tensor3d([[[4, -1]]]) // W = 1 (a span of l = 3 slots with padding 0)
    expect(
      tf
        .grad((t: tf.Tensor) => maxPoolFirst(t as tf.Tensor3D).sum())(one)
        .arraySync(),
    ).toEqual([[[1, 1]]])
    tf.dispose([x, g, one])
  })
})
