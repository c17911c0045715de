import {Flags} from '@oclif/core'
import {BACKEND_CHOICES, PRECISIONS} from '../core/engine/backend.js'

/**
 * --backend, --threads (native), --device (cuda) and --precision (cuda; native: fp32 or bf16), for the commands that compute with a model. `pretrain` passes null:
 * no flag default, since its settings come from defaults, a config file, then the flags given.
 */
export function backendFlags(defaultBackend: string | null = 'auto') {
  return {
    backend: Flags.string({
      description: 'TensorFlow.js backend (auto: the fastest available; see span doctor)',
      options: [...BACKEND_CHOICES],
      ...(defaultBackend ? {default: defaultBackend} : {}),
    }),
    threads: Flags.integer({description: 'threads of the native backend, BLAS included (default: every core; at most 1024)', min: 1, max: 1024}),
    ...deviceFlags(),
  }
}

/**
 * `span encode`'s: its --precision is its output digits, so the matrix products' precision (every
 * other command's --precision) is --compute-precision there.
 */
export function backendFlagsNoPrecision(defaultBackend: string | null = 'auto') {
  const {precision, ...rest} = backendFlags(defaultBackend)
  return {
    ...rest,
    'compute-precision': Flags.string({description: `${precision.description} (the --precision of the other commands)`, options: [...PRECISIONS]}),
  }
}

function deviceFlags() {
  return {
    device: Flags.integer({description: 'GPU of the cuda backend, from 0 (default: SPAN_CUDA_DEVICE, else 0); cuda only', min: 0}),
    precision: Flags.string({
      description:
        "matrix products' precision: fp32; bf16 (16-bit operands, fp32 accumulation; weights, optimiser, LayerNorm, softmax and losses stay fp32) on cuda, and on native where the CPU has bf16 dot products (avx512_bf16, AMX; see span doctor); tf32 (tensor cores, 10-bit mantissa inputs) and fp16 (as bf16, with dynamic loss scaling) on cuda only (default: cuda: SPAN_CUDA_PRECISION, else bf16 on compute capability 8.0 and later, fp16 on 7.x, fp32 before; native: SPAN_NATIVE_PRECISION, else bf16 where the CPU has bf16 dot products, else fp32)",
      options: [...PRECISIONS],
    }),
  }
}
