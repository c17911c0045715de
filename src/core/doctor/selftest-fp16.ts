import * as tf from '@tensorflow/tfjs'
import {AdamW} from '../train/optim.js'
import {type CudaBackend, cudaOptions, setCudaOptions} from '../engine/cuda/backend.js'
import {f16ToF32, f32ToF16} from '../engine/cuda/bf16.js'
import {LossScaler} from '../engine/cuda/loss-scale.js'
import type {SelftestCase} from '../engine/cuda/selftest-case.js'
import {selftestRand} from '../engine/cuda/selftest-rand.js'

/**
 * `span doctor --selftest`'s fp16 rows (issue 35), in a file of their own:
 * - fp16 products: on cuda at `--precision fp16`, matrix products through cast_f16.cu and cuBLASLt with
 *   CUDA_R_16F operands; on the reference backend the fp32 products of operands rounded on the host
 *   (bf16.ts f32ToF16); then the cast alone on ties, subnormals, 65504/65520 (the largest half, the
 *   first value that rounds to inf), ±inf and NaN.
 * - overflow and skip: two AdamW steps through the loss scaler (loss_scale.cu between the norm and the
 *   update): the first with an inf in one gradient (skipped: nothing changes, the scale halves), the
 *   second with gradients of a loss scaled by the halved scale (unscaled, clipped, applied; the scale
 *   grows after a window of 1); on the reference backend, one plain clipped AdamW step of the unscaled
 *   gradients and the scaler's expected [scale, skipped, t].
 */
const values = (shape: number[], seed: number, lo = -2, hi = 2): tf.Tensor =>
  tf.tensor(
    selftestRand(
      shape.reduce((a, b) => a * b, 1),
      seed,
      lo,
      hi,
    ),
    shape,
  )

const CAST = [
  1,
  1 + 2 ** -11,
  1 + 3 * 2 ** -11,
  -3.1415927,
  0.1,
  65504,
  65519.99,
  65520,
  2 ** -24,
  2 ** -25,
  1.5 * 2 ** -25,
  6.1e-5,
  -Infinity,
  Infinity,
  NaN,
  -0,
]

const onCuda = (): boolean => tf.getBackend() === 'cuda'

/** x rounded to fp16, as floats: the host's rounding off cuda, cast_f16.cu's on it. */
function rounded(x: tf.Tensor): tf.Tensor {
  if (!onCuda())
    return tf.tensor(
      Float32Array.from(x.dataSync(), (v) => f16ToF32(f32ToF16(v))),
      x.shape,
    )
  const b = tf.backend() as unknown as CudaBackend
  const y = b.makeOutput([Math.ceil(x.size / 2)], 'int32') // two halves a 4-byte element
  b.launch('cast_f16', 'span_f32_to_f16', [3, 1, 1], [32, 1, 1], [{ptr: x}, {ptr: y}, {i64: x.size}])
  const bits = new Uint16Array((b.readSync(y.dataId) as Int32Array).buffer, 0, x.size)
  b.free(y)
  return tf.tensor(Float32Array.from(bits, f16ToF32), x.shape)
}

function fp16Products(): tf.Tensor[] {
  const [a, b, c, d, e] = [values([5, 33], 11), values([17, 33], 12), values([3, 7, 9], 13), values([1, 9, 11], 14), values([5, 6], 15)]
  const was = cudaOptions().precision
  if (onCuda()) setCudaOptions({precision: 'fp16'})
  try {
    const [A, B, C, D, E] = [a, b, c, d, e].map((x) => (onCuda() ? x : rounded(x)))
    const prods = [
      tf.matMul(A as tf.Tensor2D, B as tf.Tensor2D, false, true),
      tf.matMul(A as tf.Tensor2D, E as tf.Tensor2D, true, false),
      tf.matMul(C as tf.Tensor3D, D as tf.Tensor3D),
    ]
    return [...prods, rounded(tf.tensor(CAST))]
  } finally {
    if (onCuda()) setCudaOptions({precision: was})
  }
}

const SIZES = [1001, 37, 70000]
const NAMES = ['a.weight', 'a.bias', 'c.weight']

/** Step 1 overflows (inf in a.weight's gradient), step 2 applies gradients scaled by 64 (the halved 128); p, m, v, then [scale, skipped, t]. */
function overflowAndSkip(): tf.Tensor[] {
  const opt = new AdamW({beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01})
  const params: [string, tf.Variable][] = NAMES.map((n, i) => [n, tf.variable(values([SIZES[i]], 60 + i, -1, 1), false)])
  const grads = (seed: number, scale: number) => new Map(NAMES.map((n, i) => [n, tf.tidy(() => values([SIZES[i]], seed + i, -0.05, 0.05).mul(scale))]))
  let state: tf.Tensor
  if (onCuda()) {
    opt.scaler = new LossScaler({init: 128, growth: 2, backoff: 0.5, window: 1, min: 1e-4}, [0.9, 0.999])
    const g1 = grads(70, 128)
    const w = g1.get('a.weight')!
    const withInf = Float32Array.from(w.dataSync())
    withInf[3] = Infinity // what an fp16 overflow leaves in a gradient
    g1.set('a.weight', tf.tensor(withInf, w.shape))
    w.dispose()
    for (const g of [g1, grads(80, 64)]) {
      const r = opt.applyClipped(params, g, 1e-3, 1.0)
      if ('sumsq' in r) r.sumsq.dispose()
      tf.dispose([...g.values()])
    }
    const s = opt.scaler.read()
    state = tf.tensor([s.scale, s.skipped, s.t])
  } else {
    const g = grads(80, 1)
    opt.applyClipped(params, g, 1e-3, 1.0)
    tf.dispose([...g.values()])
    state = tf.tensor([128, 1, 1])
  }
  const out = [...params.flatMap(([n, p]) => [p.clone(), opt.m.get(n)!.clone(), opt.v.get(n)!.clone()]), state]
  tf.dispose(params.map(([, p]) => p))
  opt.dispose()
  return out
}

/** The fp16 cases for `span doctor --selftest`, each its own row. */
export const fp16Cases = (): SelftestCase[] => [
  {label: 'fp16 matrix products and cast', row: 'fp16 GEMM + cast_f16.cu (fp32 accumulation)', f: fp16Products},
  {
    label: 'fp16 loss scaling: an overflowed step skipped, the next unscaled and applied',
    row: 'loss_scale.cu (overflow skips the step, scale ½ then ×2)',
    f: overflowAndSkip,
  },
]
