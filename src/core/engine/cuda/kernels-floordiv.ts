import type * as tf from '@tensorflow/tfjs'
import {broadcastShape, broadcastStrides} from '../kernel-util.js'
import {type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {BLOCK, grid, i64s, pad6, sizeOf} from './launch-util.js'

/**
 * FloorDiv on the device as tfjs' cpu backend computes it: float32 inputs give an int32 tensor
 * of floor(a / b) in double (native/cuda/kernels/floordiv.cu); int32 inputs the int32 floor
 * division of binary.cu (op 8). Mixed or other dtypes decline (the cpu fallback).
 */
const floorDiv: CudaKernel = ({inputs: {a, b}, backend}) => {
  if (!a || !b || a.dtype !== b.dtype) return null
  const shape = broadcastShape(a.shape, b.shape)
  if (!shape || (a.dtype !== 'float32' && a.dtype !== 'int32')) return null
  const out = backend.makeOutput(shape, 'int32')
  const n = sizeOf(shape)
  const dims = [...i64s(pad6(shape, 1)), ...i64s(pad6(broadcastStrides(a.shape, shape.length), 0)), ...i64s(pad6(broadcastStrides(b.shape, shape.length), 0))]
  if (a.dtype === 'float32') backend.launch('floordiv', 'span_floordiv_f32_i32', grid(n), BLOCK, [{ptr: a}, {ptr: b}, {ptr: out}, {i64: n}, ...dims])
  else backend.launch('binary', 'span_binary_i32', grid(n), BLOCK, [{ptr: a}, {ptr: b}, {ptr: out}, {i32: 8}, {i64: n}, ...dims])
  return out as tf.TensorInfo
}

/** Replaces the elementwise table's FloorDiv (registered after registerElementwise). */
export function registerFloorDiv(): void {
  registerCudaKernel('FloorDiv', floorDiv)
}
