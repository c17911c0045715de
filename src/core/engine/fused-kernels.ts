import * as tf from '@tensorflow/tfjs'
import {type CudaKernelArgs, cudaKernelOf} from './cuda/kernel-table.js'
import {COMPOSITE_FUSED} from './fused-composite.js'
import {NATIVE_FUSED} from './fused-native.js'
import type {KernelArgs} from './kernel-util.js'
import {nativeAddon} from './native.js'
import {kernelsEnabled} from './native-kernels.js'

/**
 * span's fused layers as named tfjs kernels. Each is registered for every backend span runs
 * (`registerKernel` per backend) and has its gradient registered once (`registerGradient`),
 * expressed through the matching backward kernel, so the model calls one op (fused.ts) on
 * any backend. A backend with its own implementation serves it (the native backend: tfjs'
 * `cpu` with span's addon, fused-native.ts; later `cuda`); the others run the composite
 * formula (fused-composite.ts). The native implementation declines (null) what it does not
 * take and the composite runs then, as it does with the native kernels switched off.
 */
export const FUSED_KERNELS = {
  linear: 'SpanLinear',
  linearGrad: 'SpanLinearGrad',
  layerNorm: 'SpanLayerNorm',
  layerNormGrad: 'SpanLayerNormGrad',
  crossEntropy: 'SpanCrossEntropy',
  crossEntropyGrad: 'SpanCrossEntropyGrad',
  attention: 'SpanAttention',
  attentionGrad: 'SpanAttentionGrad',
  dropout: 'SpanDropout',
  sumSquares: 'SpanSumSquares',
  adamw: 'SpanAdamW',
  residualLayerNorm: 'SpanResidualLayerNorm',
  residualLayerNormGrad: 'SpanResidualLayerNormGrad',
} as const

/** Backends that get the fused kernels when this module loads (native runs as `cpu`). */
export const FUSED_BACKENDS = ['cpu', 'wasm', 'tensorflow', 'cuda'] as const

type Impl = (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[] | null

/** The `cpu` kernel: the addon's where it is loaded and switched on and takes the inputs, else the composite. */
function cpuKernel(name: string): Impl {
  const native = NATIVE_FUSED[name]
  return (args) => {
    const addon = kernelsEnabled() ? nativeAddon() : null
    return (addon && native?.(addon, args)) || COMPOSITE_FUSED[name](args)
  }
}

/**
 * The `cuda` kernel: the one registered with cuda/kernel-table.ts (looked up at call time, so the
 * fused CUDA kernels may register after this module loaded) unless absent or declining, else the composite.
 */
function cudaKernel(name: string): Impl {
  return (args) => cudaKernelOf(name)?.(args as unknown as CudaKernelArgs) || COMPOSITE_FUSED[name](args)
}

/**
 * Registers every fused kernel for `backendName`: `impl(name)` where it returns a function
 * (a backend's own kernels, e.g. cuda), else the composite. Kernels already registered for
 * that backend are left alone. Returns the kernel names registered now.
 */
export function registerFusedKernels(backendName: string, impl?: (name: string) => Impl | undefined): string[] {
  const done: string[] = []
  for (const name of Object.values(FUSED_KERNELS)) {
    if (tf.getKernel(name, backendName)) continue
    const own = impl?.(name)
    const kernelFunc = (own ?? COMPOSITE_FUSED[name]) as unknown as tf.KernelFunc
    tf.registerKernel({kernelName: name, backendName, kernelFunc})
    done.push(name)
  }
  return done
}

const run = (name: string, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap = {}): tf.Tensor | tf.Tensor[] =>
  tf.engine().runKernel(name, inputs, attrs) as tf.Tensor | tf.Tensor[]

const first = (dy: tf.Tensor | tf.Tensor[]): tf.Tensor => (Array.isArray(dy) ? dy[0] : dy)

/** Gradient configs: saved tensors are the inputs named, then the outputs flagged, in order. */
const GRADIENTS: tf.GradConfig[] = [
  {
    kernelName: FUSED_KERNELS.linear,
    inputsToSave: ['x', 'w'],
    outputsToSave: [false, true],
    gradFunc: (dy, [x, w, z], attrs) => {
      const [dx, dw, db] = run(FUSED_KERNELS.linearGrad, {dy: first(dy), x, w, z}, attrs as tf.NamedAttrMap) as tf.Tensor[]
      return {x: () => dx, w: () => dw, b: () => db}
    },
  },
  {
    kernelName: FUSED_KERNELS.layerNorm,
    inputsToSave: ['x', 'g'],
    outputsToSave: [false, true, true],
    gradFunc: (dy, [x, g, mean, rstd]) => {
      const [dx, dg, db] = run(FUSED_KERNELS.layerNormGrad, {dy: first(dy), x, g, mean, rstd}) as tf.Tensor[]
      return {x: () => dx, g: () => dg, b: () => db}
    },
  },
  {
    kernelName: FUSED_KERNELS.crossEntropy,
    inputsToSave: ['logits', 'labels'],
    outputsToSave: [false, true],
    gradFunc: (dy, [logits, labels, lse]) => ({
      logits: () => run(FUSED_KERNELS.crossEntropyGrad, {dy: first(dy), logits, labels, lse}) as tf.Tensor,
      labels: () => tf.zerosLike(labels),
    }),
  },
  {
    kernelName: FUSED_KERNELS.attention,
    inputsToSave: ['q', 'k', 'v', 'mask'],
    // ctx too: the cuda backend's fused attention saves the row lse [B, A, T] in place of probs and
    // needs ctx and the mask to recompute them (ctx is kept anyway: the output projection saves it)
    outputsToSave: [true, true],
    gradFunc: (dy, [q, k, v, mask, ctx, probs], attrs) => {
      const [dq, dk, dv] = run(FUSED_KERNELS.attentionGrad, {dy: first(dy), q, k, v, probs, ctx, mask}, attrs as tf.NamedAttrMap) as tf.Tensor[]
      return {q: () => dq, k: () => dk, v: () => dv, mask: () => tf.zerosLike(mask)}
    },
  },
  {
    kernelName: FUSED_KERNELS.residualLayerNorm,
    inputsToSave: ['x', 'w', 'g'],
    outputsToSave: [false, true, true, true],
    gradFunc: (dy, [x, w, g, s, mean, rstd], attrs) => {
      const grads = run(FUSED_KERNELS.residualLayerNormGrad, {dy: first(dy), x, w, g, s, mean, rstd}, attrs as tf.NamedAttrMap) as tf.Tensor[]
      const [dx, dw, db, dresidual, dg, dbeta] = grads
      return {x: () => dx, w: () => dw, b: () => db, residual: () => dresidual, g: () => dg, beta: () => dbeta}
    },
  },
  {
    kernelName: FUSED_KERNELS.dropout,
    gradFunc: (dy, _saved, attrs) => ({x: () => run(FUSED_KERNELS.dropout, {x: first(dy)}, attrs as tf.NamedAttrMap) as tf.Tensor}),
  },
]

let gradientsRegistered = false

/** Registers the gradients once per process (tfjs keeps one per kernel name). */
export function registerFusedGradients(): void {
  if (gradientsRegistered) return
  for (const g of GRADIENTS) if (!tf.getGradient(g.kernelName)) tf.registerGradient(g)
  gradientsRegistered = true
}

/** Everything once: gradients, the native-or-composite `cpu` kernels, and composites for the other backends. */
export function setupFusedKernels(): void {
  registerFusedGradients()
  registerFusedKernels('cpu', cpuKernel)
  registerFusedKernels('cuda', cudaKernel)
  for (const b of FUSED_BACKENDS) if (b !== 'cpu' && b !== 'cuda') registerFusedKernels(b)
}

/** Test hook: whether each fused kernel is registered for `backendName`. */
export function fusedKernelsOf(backendName: string): string[] {
  return Object.values(FUSED_KERNELS).filter((n) => tf.getKernel(n, backendName))
}

/** A call of kernel `name` with these inputs and attributes (the op functions' single entry point). */
export const runFused = run
