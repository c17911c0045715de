import {dirname, join} from 'node:path'
import {SpanError} from '../../stream/errors.js'
import {type HostTensor, readSafetensors} from '../safetensors.js'
import {readTorchFile} from './torch-load.js'
import {readError} from '../../util/fs-errors.js'
import {readTextWhole} from '../../util/read-whole.js'

/** One weights file of either format, by its name. */
export async function readWeightsFile(path: string): Promise<Map<string, HostTensor>> {
  return path.endsWith('.safetensors') ? (await readSafetensors(path)).tensors : readTorchFile(path)
}

/**
 * A sharded checkpoint (`model.safetensors.index.json`, `pytorch_model.bin.index.json`, as
 * transformers' save_pretrained writes them): `weight_map` names the shard of every tensor;
 * each shard is read once and every tensor of the map must be in its shard.
 */
export async function readSharded(indexPath: string): Promise<Map<string, HostTensor>> {
  let map: Record<string, unknown>
  try {
    map = (JSON.parse(await readTextWhole(indexPath, 'config')) as {weight_map?: Record<string, unknown>}).weight_map ?? {}
  } catch (err) {
    throw err instanceof SyntaxError ? new SpanError(`${indexPath}: ${err.message}`) : readError(err, indexPath)
  }
  const byShard = new Map<string, string[]>()
  for (const [name, shard] of Object.entries(map)) {
    if (typeof shard !== 'string' || shard.includes('/') || shard.startsWith('.'))
      throw new SpanError(`${indexPath}: tensor "${name}" names a bad shard ${JSON.stringify(shard)}`)
    byShard.set(shard, [...(byShard.get(shard) ?? []), name])
  }
  if (byShard.size === 0) throw new SpanError(`${indexPath}: no weight_map`)
  const out = new Map<string, HostTensor>()
  for (const [shard, names] of byShard) {
    const path = join(dirname(indexPath), shard)
    const tensors = await readWeightsFile(path)
    for (const name of names) {
      const t = tensors.get(name)
      if (!t) throw new SpanError(`${path}: tensor "${name}" is missing (the index puts it in this shard)`)
      out.set(name, t)
    }
  }
  return out
}
