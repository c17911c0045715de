import {stat} from 'node:fs/promises'
import {join} from 'node:path'
import {SpanError} from '../stream/errors.js'
import type {HostTensor} from './safetensors.js'
import {readSharded, readWeightsFile} from './torch/sharded.js'

/** The weights files a checkpoint directory may hold, the first present one wins (safetensors first). */
export const WEIGHTS_CANDIDATES = ['model.safetensors', 'model.safetensors.index.json', 'pytorch_model.bin', 'pytorch_model.bin.index.json'] as const
export const TORCH_WEIGHTS_FILE = 'pytorch_model.bin'

export interface Weights {
  tensors: Map<string, HostTensor>
  /** the file read (an index for sharded checkpoints), for messages */
  source: string
}

const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  )

/** A checkpoint directory's tensors, from model.safetensors, pytorch_model.bin or their sharded forms. */
export async function readWeights(dir: string): Promise<Weights> {
  for (const name of WEIGHTS_CANDIDATES) {
    const path = join(dir, name)
    if (!(await exists(path))) continue
    return {tensors: name.endsWith('.index.json') ? await readSharded(path) : await readWeightsFile(path), source: path}
  }
  throw new SpanError(`${dir}: no weights (${WEIGHTS_CANDIDATES.join(', ')})`)
}
