import * as tf from '@tensorflow/tfjs'

/** What the fused ops read of tfjs' cpu backend: each tensor's storage by data id. */
interface CpuData {
  data: {get(id: tf.DataId): {values?: unknown} | undefined}
}

function storage(t: tf.Tensor): unknown {
  return (tf.backend() as unknown as Partial<CpuData>).data?.get(t.dataId)?.values
}

/** The float32 storage of a cpu-backend tensor, or null (another dtype or backend, or not a Float32Array). */
export function f32(t: tf.Tensor): Float32Array | null {
  if (t.dtype !== 'float32') return null
  const v = storage(t)
  return v instanceof Float32Array ? v : null
}

/** The int32 storage of a cpu-backend tensor, or null. */
export function i32(t: tf.Tensor): Int32Array | null {
  if (t.dtype !== 'int32') return null
  const v = storage(t)
  return v instanceof Int32Array ? v : null
}

/** Values of an upstream gradient: its storage when float32 on the cpu backend, else a read. */
export function gradValues(dy: tf.Tensor): Float32Array {
  return f32(dy) ?? Float32Array.from(dy.dataSync())
}
