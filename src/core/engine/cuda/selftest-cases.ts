import * as tf from '@tensorflow/tfjs'
import {runFused} from '../fused-kernels.js'
import {bf16Cases} from './selftest-bf16.js'
import type {SelftestCase} from './selftest-case.js'

/**
 * The inputs `span doctor --selftest` runs every cuda kernel on (core/doctor/selftest.ts): odd sizes,
 * broadcasting, empty tensors, int32 and bool, seeded so that both backends see the same values.
 * Each case returns its outputs; the doctor runs it on the reference backend and on cuda. A case
 * with a `row` checks a device path that is no registered kernel (the multi-tensor AdamW, bf16
 * products): the table gives it that row of its own, and its error is not laid on the kernels
 * that merely ran around it.
 */
import {selftestRand} from './selftest-rand.js'

const rand = selftestRand
const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1)
const F = (shape: number[], seed: number, lo?: number, hi?: number) => tf.tensor(rand(size(shape), seed, lo, hi), shape)
const I = (shape: number[], seed: number, hi = 5) => tf.tensor(rand(size(shape), seed, 0, hi).map(Math.floor), shape, 'int32')
const B = (shape: number[], seed: number) => tf.tensor(rand(size(shape), seed, 0, 2).map(Math.floor), shape, 'bool')
const fused = (name: string, inputs: tf.NamedTensorMap, attrs?: tf.NamedAttrMap) => runFused(name, inputs, attrs)

/** Squeeze on cuda (tfjs' cpu has no such kernel: its squeeze is a reshape). */
const squeeze = (x: tf.Tensor) => (tf.getBackend() === 'cuda' ? (tf.engine().runKernel('Squeeze', {x}, {axis: [1]}) as tf.Tensor) : x.reshape([3, 2]))

const SHAPES: [number[], number[]][] = [
  [[3, 5], [5]],
  [
    [2, 1, 7],
    [3, 1],
  ],
  [[0, 4], [4]],
  [[], [4]],
]

function binary(): SelftestCase[] {
  const arith = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'squaredDifference', 'pow'] as const
  const cases: SelftestCase[] = SHAPES.map(([sa, sb]) => ({
    label: `binary ${JSON.stringify(sa)}×${JSON.stringify(sb)}`,
    f: () => [
      ...arith.map((op) => tf[op](F(sa, 1, 0.5, 2), F(sb, 2, 0.5, 2))),
      tf.add(I(sa, 3), I(sb, 4)),
      tf.floorDiv(I(sa, 3, 9), tf.add(I(sb, 4), tf.scalar(1, 'int32'))),
      tf.floorDiv(F(sa, 5, -9, 9), F(sb, 6, 0.25, 2)), // float inputs: an int32 result, as tfjs' cpu backend
      tf.floorDiv(F(sa, 7, -9, 9), F(sb, 8, -2, -0.25)),
    ],
  }))
  // floor(a / b) in double, not float (7 / 0.1f is 69.99… in double, 70 in float); ±∞ and NaN give 0; 1e13 wraps modulo 2³²
  const edge = () => tf.floorDiv(tf.tensor([7, 1, -1, 0, 1e10, NaN, -7.5]), tf.tensor([0.1, 0, 0, 0, 1e-3, 1, 2]))
  return [...cases, {label: 'floorDiv of floats (int32 out)', f: edge}]
}

function logic(): SelftestCase[] {
  return [
    {
      label: 'compare/logic',
      f: () => [tf.equal(I([4, 3], 1, 3), I([3], 2, 3)), tf.greater(F([5, 2], 3), F([2], 4)), tf.less(F([7], 5), 0), tf.lessEqual(I([9], 3), I([9], 4))],
    },
    {
      label: 'compare/logic 2',
      f: () => [
        tf.logicalAnd(B([3, 4], 1), B([4], 2)),
        tf.logicalOr(B([5], 3), B([5], 4)),
        tf.logicalNot(B([6], 6)),
        tf.greaterEqual(I([9], 3), I([9], 4)),
        tf.notEqual(F([0, 3], 1), F([3], 2)),
      ],
    },
  ]
}

const UNARY = ['neg', 'square', 'exp', 'tanh', 'relu', 'step', 'abs', 'erf', 'sigmoid', 'sign', 'floor', 'ceil'] as const

function unary(): SelftestCase[] {
  const x = () => F([3, 7], 7)
  const pos = () => F([11], 8, 0.1, 4)
  return [
    {
      label: 'unary',
      f: () => UNARY.map((op) => tf[op](x())),
    },
    {
      label: 'unary positive',
      f: () => [tf.sqrt(pos()), tf.rsqrt(pos()), tf.log(pos()), tf.log1p(pos()), tf.reciprocal(pos()), tf.square(I([5], 9)), tf.neg(F([0], 1))],
    },
    {
      label: 'cast',
      f: () => [
        tf.cast(F([13], 10, -5, 5), 'int32'),
        tf.cast(I([13], 11), 'float32'),
        tf.cast(F([13], 12, -1, 1), 'bool'),
        tf.cast(B([13], 13), 'float32'),
        tf.cast(I([0], 1), 'bool'),
      ],
    },
    {
      label: 'addN/select/fill',
      f: () => [
        tf.addN([F([3, 4], 1), F([3, 4], 2), F([3, 4], 3)]),
        tf.where(B([3, 4], 7), F([3, 4], 8), F([3, 4], 9)),
        tf.zerosLike(F([3, 2], 1)),
        tf.onesLike(I([5], 1)),
        tf.fill([2, 3], 2.5),
      ],
    },
  ]
}

function reductions(): SelftestCase[] {
  const x = () => F([3, 4, 5], 14)
  return [
    {
      label: 'reduce',
      f: () => [
        tf.sum(x()),
        tf.sum(x(), 1),
        tf.sum(x(), [0, 2], true),
        tf.max(x(), -1),
        tf.min(x(), 0),
        tf.mean(x(), [1, 2]),
        tf.prod(F([3, 3], 2, 0.5, 1.5), 1),
      ],
    },
    {
      label: 'reduce int/empty',
      f: () => [tf.sum(I([6, 7], 15), 0), tf.argMax(x(), 2), tf.argMax(x(), 0), tf.argMin(I([9], 16), 0), tf.sum(F([0, 3], 1), 0), tf.softmax(x())],
    },
    {label: 'any/all', f: () => [tf.any(B([4, 5], 3), 1), tf.all(B([4, 5], 4), 0)]},
  ]
}

function shapes(): SelftestCase[] {
  const x = () => F([2, 3, 5], 17)
  return [
    {
      label: 'reshape/transpose/slice',
      f: () => [x().reshape([6, 5]), x().expandDims(1), squeeze(F([3, 1, 2], 2)), tf.transpose(x(), [2, 0, 1]), tf.slice(x(), [1, 0, 2], [1, 2, -1])],
    },
    {
      label: 'split/concat/stack',
      f: () => [
        ...tf.split(x(), [1, 3, 1], 2),
        ...tf.split(I([4, 6], 1), 2, 0),
        tf.concat([x(), F([2, 1, 5], 3)], 1),
        tf.concat([I([3], 1), I([0], 2), I([2], 3)]),
        tf.stack([F([3, 2], 1), F([3, 2], 2)], 1),
      ],
    },
  ]
}

const PADS: [number, number][] = [
  [0, 1],
  [2, 0],
  [1, 1],
]

function copies(): SelftestCase[] {
  const x = () => F([2, 3, 5], 17)
  return [
    {
      label: 'pad/tile',
      f: () => [tf.pad(x(), PADS, 0.5), tf.tile(F([2, 3], 4), [2, 3]), tf.tile(I([3], 4), [2])],
    },
    {
      label: 'gather/scatter/range',
      f: () => [
        tf.gather(F([7, 3], 1), I([5], 2, 7)),
        tf.gather(F([2, 6, 3], 3), I([2, 2], 4, 6), 1),
        tf.scatterND(tf.tensor2d([[1], [3], [1], [0]], [4, 1], 'int32'), F([4, 3], 5), [5, 3]),
        tf.range(0, 11),
        tf.range(2, 7, 0.5, 'float32'),
        tf.range(5, 5),
      ],
    },
    {
      label: 'matmul',
      f: () => [
        tf.matMul(F([5, 7], 1), F([7, 3], 2)),
        tf.matMul(F([7, 5], 3), F([3, 7], 4), true, true),
        tf.matMul(F([4, 3, 5], 7), F([5, 2], 10)),
        tf.matMul(F([3, 0], 1), F([0, 2], 2)),
      ],
    },
  ]
}

const ADAMW = {lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, bc1: 1 - 0.9 ** 3, bc2: 1 - 0.999 ** 3, gradScale: 0.4}

/** SpanAttentionGrad from the backend's own SpanAttention outputs (native and cuda with flash attention save the row lse and need ctx and the mask; native without it saves probs). */
function attentionGrad(dy: tf.Tensor, [q, k, v]: tf.Tensor[], mask: tf.Tensor, att: tf.NamedAttrMap): tf.Tensor[] {
  const [ctx, probs] = fused('SpanAttention', {q, k, v, mask}, att) as tf.Tensor[]
  return [fused('SpanAttentionGrad', {dy, q, k, v, probs, ctx, mask}, att)].flat()
}

/** span's fused kernels (docs/cuda-fused-kernels.md), called by name with the inputs fused.ts gives them. */
function fusedCases(): SelftestCase[] {
  const labels = () => tf.tensor1d([0, 12, 99, 5, 50, 3, 7], 'int32')
  const qkv = (s: number) => F([2, 7, 12], s)
  const mask = () => tf.tensor2d([0, 0, 0, 0, 0, -10000, -10000, 0, 0, 0, 0, 0, 0, 0], [2, 7])
  const att = {heads: 3, rate: 0.2, seed: 77}
  return [
    {label: 'layer norm', f: () => [fused('SpanLayerNorm', {x: F([3, 5, 37], 1), g: F([37], 2), b: F([37], 3)}, {eps: 1e-12})].flat()},
    {
      label: 'layer norm grad',
      f: () => [fused('SpanLayerNormGrad', {dy: F([3, 5, 37], 6), x: F([3, 5, 37], 1), g: F([37], 2), mean: F([15], 4), rstd: F([15], 5, 0.5, 2)})].flat(),
    },
    {label: 'cross-entropy', f: () => [fused('SpanCrossEntropy', {logits: F([7, 101], 7, -5, 5), labels: labels()})].flat()},
    {
      label: 'cross-entropy grad',
      f: () => [fused('SpanCrossEntropyGrad', {dy: tf.scalar(0.7), logits: F([7, 101], 7, -5, 5), labels: labels(), lse: F([7], 8, 4, 6)})].flat(),
    },
    {label: 'dropout', f: () => [fused('SpanDropout', {x: F([33, 31], 9)}, {rate: 0.3, seed: 1234})].flat()},
    {label: 'sum of squares (one empty)', f: () => [fused('SpanSumSquares', {a: F([1001], 10), b: F([3, 7], 11), c: F([0], 12)})].flat()},
    {
      label: 'adamw',
      f: () => [fused('SpanAdamW', {p: F([1001], 13), m: F([1001], 14, -0.01, 0.01), v: F([1001], 15, 0, 0.001), g: F([1001], 16)}, ADAMW)].flat(),
    },
    ...['gelu', 'linear'].flatMap((activation) => [
      {label: `linear ${activation}`, f: () => [fused('SpanLinear', {x: F([9, 13], 17), w: F([11, 13], 18), b: F([11], 19)}, {activation})].flat()},
      {
        label: `linear grad ${activation}`,
        f: () => [fused('SpanLinearGrad', {dy: F([9, 11], 20), x: F([9, 13], 17), w: F([11, 13], 18), z: F([9, 11], 21)}, {activation})].flat(),
      },
    ]),
    // ctx only: the second output is what the backend's own gradient needs (native: probs; cuda: the row lse)
    {label: 'attention', f: () => [(fused('SpanAttention', {q: qkv(22), k: qkv(23), v: qkv(24), mask: mask()}, att) as tf.Tensor[])[0]]},
    {label: 'attention grad', f: () => attentionGrad(qkv(26), [qkv(22), qkv(23), qkv(24)], mask(), att)},
  ]
}

/** The residual LayerNorm (issue 21: bias + dropout + residual + LayerNorm after the GEMM) and its gradient, with and without dropout. */
function epilogueCases(): SelftestCase[] {
  return [0, 0.25].flatMap((rate) => [
    {
      label: `residual layer norm, dropout ${rate}`,
      f: () =>
        [
          fused(
            'SpanResidualLayerNorm',
            {x: F([37, 13], 30), w: F([19, 13], 31, -0.5, 0.5), b: F([19], 32), residual: F([37, 19], 34), g: F([19], 33, 0.5, 1.5), beta: F([19], 35)},
            {eps: 1e-12, rate, seed: 99},
          ),
        ].flat(),
    },
    {
      label: `residual layer norm grad, dropout ${rate}`,
      f: () => {
        const saved = {s: F([37, 19], 36), mean: F([37], 37, -0.3, 0.3), rstd: F([37], 38, 0.5, 2)}
        return [
          fused(
            'SpanResidualLayerNormGrad',
            {dy: F([37, 19], 39), x: F([37, 13], 30), w: F([19, 13], 31, -0.5, 0.5), g: F([19], 33, 0.5, 1.5), ...saved},
            {eps: 1e-12, rate, seed: 99},
          ),
        ].flat()
      },
    },
  ])
}

/**
 * Every case, in table order; `optimiser` (core/doctor/selftest-optimiser.ts' AdamW cases: the
 * optimiser is the trainer's, above the engine) goes where the table has always had them.
 */
export const selftestCases = (optimiser: SelftestCase[] = []): SelftestCase[] => [
  ...binary(),
  ...logic(),
  ...unary(),
  ...reductions(),
  ...shapes(),
  ...copies(),
  ...fusedCases(),
  ...epilogueCases(),
  ...optimiser,
  ...bf16Cases(),
]
