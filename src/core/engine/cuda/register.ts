import * as tf from '@tensorflow/tfjs'
import {FUSED_KERNELS} from '../fused-kernels.js'
import type {CudaBackend} from './backend.js'
import {type CudaKernelArgs, cudaKernelNames, cudaKernelOf} from './kernel-table.js'
import {registerAttention} from './kernels-attention.js'
import {registerElementwise} from './kernels-elementwise.js'
import {registerFloorDiv} from './kernels-floordiv.js'
import {registerFused} from './kernels-fused.js'
import {registerIndex} from './kernels-index.js'
import {registerReduce} from './kernels-reduce.js'
import {registerShape} from './kernels-shape.js'

/**
 * Registers the `cuda` backend with tfjs: the census kernels of kernels-*.ts, and for every other
 * kernel tfjs' cpu backend has, a fallback that copies the inputs to the host, runs the cpu
 * kernel and copies the outputs back (correct, synchronising, counted in `fallbackCounts`, so
 * tests can hold the census kernels to running on the device). A census kernel that declines
 * (returns null) takes the fallback too. span's fused kernels are fused-kernels.ts' business.
 */
const fallbacks = new Map<string, number>()

/** How often each kernel ran through the cpu fallback since the last reset. */
export const fallbackCounts = (): Record<string, number> => Object.fromEntries(fallbacks)
export const resetFallbackCounts = (): void => fallbacks.clear()

type Info = tf.TensorInfo

function toCpu(cuda: CudaBackend, cpu: tf.KernelBackend, t: Info): Info {
  return {dataId: cpu.write(cuda.readSync(t.dataId), t.shape, t.dtype), shape: t.shape, dtype: t.dtype}
}

/** Runs kernel `name` of the cpu backend on copies of the inputs; outputs uploaded to the device. */
function fallback(name: string, args: {inputs: Record<string, Info | undefined>; attrs?: unknown; backend: unknown}): Info | Info[] {
  fallbacks.set(name, (fallbacks.get(name) ?? 0) + 1)
  const cuda = args.backend as CudaBackend
  const cpu = tf.engine().findBackend('cpu')
  ;(cpu as unknown as {firstUse?: boolean}).firstUse = false // its first write would print tfjs' "install tfjs-node" banner on span's stderr (backend.ts quietCpuBanner)
  const config = tf.getKernel(name, 'cpu')
  if (!config) throw new Error(`the cuda backend has no kernel ${name}, and neither has cpu`)
  const copy = (t: Info | undefined) => t && toCpu(cuda, cpu, t)
  // AddN, Concat, Pack take an array of inputs, the others a record
  const inputs = Array.isArray(args.inputs) ? args.inputs.map(copy) : Object.fromEntries(Object.entries(args.inputs).map(([k, t]) => [k, copy(t)]))
  const raw = config.kernelFunc({inputs: inputs as tf.NamedTensorInfoMap, attrs: args.attrs as tf.NamedAttrMap, backend: cpu}) as Info | Info[]
  const outs = (Array.isArray(raw) ? raw : [raw]).map((o) => {
    const t = {dataId: cuda.write(cpu.readSync(o.dataId), o.shape, o.dtype), shape: o.shape, dtype: o.dtype}
    cpu.disposeData(o.dataId)
    return t
  })
  for (const t of Object.values(inputs) as (Info | undefined)[]) if (t) cpu.disposeData(t.dataId)
  return Array.isArray(raw) ? outs : outs[0]
}

const FUSED = new Set<string>(Object.values(FUSED_KERNELS))

function kernelFor(name: string): tf.KernelFunc {
  const own = cudaKernelOf(name)
  return ((args: CudaKernelArgs) => (own && own(args)) || fallback(name, args)) as unknown as tf.KernelFunc
}

let registered = false

/** Every cuda kernel, once (the backend itself is registered by start.ts once its device opened). */
export function registerCudaBackend(): void {
  if (registered) return
  registered = true
  registerElementwise()
  registerFloorDiv() // float inputs → int32, as tfjs' cpu backend
  registerShape()
  registerReduce()
  registerIndex()
  registerFused()
  registerAttention()
  const names = new Set([...cudaKernelNames(), ...tf.getKernelsForBackend('cpu').map((k) => k.kernelName)])
  for (const name of names) {
    if (FUSED.has(name) || tf.getKernel(name, 'cuda')) continue
    tf.registerKernel({kernelName: name, backendName: 'cuda', kernelFunc: kernelFor(name)})
  }
}

/** The kernels implemented on the device (the rest fall back to cpu). */
export const cudaDeviceKernels = (): string[] => cudaKernelNames().filter((n) => !FUSED.has(n))
