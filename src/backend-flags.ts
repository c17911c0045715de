import {Flags} from '@oclif/core'
import {BACKEND_CHOICES} from './core/engine/backend.js'

/**
 * --backend and --threads, for the commands that compute with a model. `pretrain` passes null:
 * no flag default, since its settings come from defaults, a config file, then the flags given.
 */
export function backendFlags(defaultBackend: string | null = 'auto') {
  return {
    backend: Flags.string({description: 'TensorFlow.js backend (auto: the fastest available; see span doctor)', options: [...BACKEND_CHOICES], ...(defaultBackend ? {default: defaultBackend} : {})}),
    threads: Flags.integer({description: 'threads of the native backend, BLAS included (default: every core; at most 1024)', min: 1, max: 1024}),
  }
}
