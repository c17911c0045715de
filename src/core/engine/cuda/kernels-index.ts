import type * as tf from '@tensorflow/tfjs'
import {type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {BLOCK, grid, i64s, sizeOf, stridesOf} from './launch-util.js'

/**
 * Index census kernels (native/cuda/kernels/index.cu): GatherV2 (batchDims 0), ScatterNd
 * (duplicates summed with atomics), Range; and BatchMatMul through cuBLASLt (gemm-layout.ts),
 * one strided-batched call, a batch of 1 broadcast with stride 0.
 */
const gather: CudaKernel = ({inputs, attrs, backend}) => {
  const {x, indices} = inputs
  if (!x || !indices || Number(attrs?.batchDims ?? 0) !== 0) return null
  const axis = (attrs!.axis as number) < 0 ? (attrs!.axis as number) + x.shape.length : (attrs!.axis as number)
  const outer = sizeOf(x.shape.slice(0, axis))
  const inner = sizeOf(x.shape.slice(axis + 1))
  const nIdx = sizeOf(indices.shape)
  const shape = [...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)]
  const out = backend.makeOutput(shape, x.dtype)
  const n = outer * nIdx * inner
  backend.launch('index', 'span_gather', grid(n), BLOCK, [{ptr: x}, {ptr: indices}, {ptr: out}, {i64: n}, {i64: x.shape[axis]}, {i64: inner}, {i64: nIdx}])
  return out
}

const scatterNd: CudaKernel = ({inputs, attrs, backend}) => {
  const {indices, updates} = inputs
  const shape = attrs!.shape as number[]
  if (!indices || !updates) return null
  const sliceRank = indices.shape[indices.shape.length - 1] ?? 1
  const sliceSize = sizeOf(shape.slice(sliceRank))
  const out = backend.zeros(shape, updates.dtype)
  const n = sizeOf(updates.shape)
  if (sliceRank > 6) return (backend.free(out), null)
  const st = [...stridesOf(shape).slice(0, sliceRank), ...new Array<number>(6 - sliceRank).fill(0)] // [s_0, …, s_{r-1}, 0, …]
  const t = updates.dtype === 'float32' ? 'f32' : 'i32'
  if (sliceSize === 0 || n === 0) return out
  const args = [{i64: n}, {i32: sliceRank}, {i64: sliceSize}, {i64: sizeOf(shape)}, ...i64s(st)]
  backend.launch('index', `span_scatter_nd_${t}`, grid(n), BLOCK, [{ptr: indices}, {ptr: updates}, {ptr: out}, ...args])
  return out
}

const range: CudaKernel = ({attrs, backend}) => {
  const {start, stop, step, dtype} = attrs as {start: number; stop: number; step: number; dtype: tf.DataType}
  const n = Math.max(Math.ceil((stop - start) / step), 0)
  const out = backend.makeOutput([n], dtype)
  const f = dtype === 'float32' ? 'f32' : 'i32'
  backend.launch('index', `span_range_${f}`, grid(n), BLOCK, [
    {ptr: out},
    f === 'f32' ? {f32: start} : {i32: start},
    f === 'f32' ? {f32: step} : {i32: step},
    {i64: n},
  ])
  return out
}

const batchMatMul: CudaKernel = ({inputs, attrs, backend}) => {
  const {a, b} = inputs
  if (!a || !b || a.dtype !== 'float32' || b.dtype !== 'float32') return null
  const [tA, tB] = [Boolean(attrs?.transposeA), Boolean(attrs?.transposeB)]
  const [ar, ac] = a.shape.slice(-2)
  const [br, bc] = b.shape.slice(-2)
  const [bA, bB] = [sizeOf(a.shape.slice(0, -2)), sizeOf(b.shape.slice(0, -2))]
  if (bA !== bB && bA !== 1 && bB !== 1) return null
  const [M, K, N] = [tA ? ac : ar, tA ? ar : ac, tB ? br : bc]
  const outer = bA >= bB ? a.shape.slice(0, -2) : b.shape.slice(0, -2)
  const out = backend.makeOutput([...outer, M, N], 'float32')
  const batch = Math.max(bA, bB)
  if (K === 0) return (backend.free(out), backend.zeros([...outer, M, N], 'float32'))
  backend.gemm({a, b, c: out, M, N, K, transA: tA, transB: tB, batch, strideA: bA === 1 ? 0 : ar * ac, strideB: bB === 1 ? 0 : br * bc, strideC: M * N})
  return out
}

export function registerIndex(): void {
  registerCudaKernel('GatherV2', gather)
  registerCudaKernel('ScatterNd', scatterNd)
  registerCudaKernel('Range', range)
  registerCudaKernel('BatchMatMul', batchMatMul)
}
