import {Flags} from '@oclif/core'
import {SpanError} from '../core/stream/errors.js'
import {MAX_BATCH} from './limits.js'

/**
 * --batch-size N|auto and --effective-batch N of `span pretrain` (README "Memory plan"). No flag
 * defaults: settings come from defaults (auto), a resumed run, a config file, then the flags given.
 */
export function batchFlags() {
  return {
    'batch-size': Flags.custom<number | 'auto'>({
      description: 'examples per micro-batch, or auto: the largest that fits in memory, accumulated to --effective-batch (default auto)',
      parse: async (s) => {
        if (s === 'auto') return 'auto'
        const n = Number(s)
        if (!/^\d+$/.test(s.trim()) || n < 1 || n > MAX_BATCH) throw new SpanError(`expected auto or an integer in [1, ${MAX_BATCH}], got ${s}`, 2)
        return n
      },
    })(),
    'effective-batch': Flags.integer({
      description: 'examples per optimisation step, over micro-batches and processes (default: --batch-size × --accumulate, 32 with auto)',
      min: 1,
      max: MAX_BATCH,
    }),
  }
}
