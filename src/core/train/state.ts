import * as tf from '@tensorflow/tfjs'
import {stat, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import type {CheckpointFile} from '../model/checkpoint.js'
import {type HostTensor, f32Tensor, readSafetensors, toFloat32, writeSafetensors} from '../model/safetensors.js'
import {SpanError} from '../stream/errors.js'
import type {AdamW} from './optim.js'
import {restoreScaler, scalerMetadata} from './loss-scale.js'
import {readError} from '../util/fs-errors.js'
import {parseJsonText} from '../util/json.js'
import {readTextWhole} from '../util/read-whole.js'

export const OPTIMIZER_FILE = 'optimizer.safetensors'
export const TRAINER_STATE_FILE = 'trainer_state.json'

/**
 * The checkpoint files needed to resume exactly (docs/formats.md#checkpoint-directory): the AdamW moments
 * (torch names exp_avg / exp_avg_sq per parameter, the step in the metadata) and the
 * trainer's own JSON state (step, data position, RNG state, …).
 */
export async function trainingStateFiles(opt: AdamW, trainerState: Record<string, unknown>): Promise<CheckpointFile[]> {
  const meta = {step: String(opt.step), ...scalerMetadata(opt)} // with a loss scaler: its state, and the updates applied as the step
  const host: [string, HostTensor][] = []
  for (const [prefix, moments] of [['exp_avg', opt.m], ['exp_avg_sq', opt.v]] as const) {
    for (const [name, t] of moments) host.push([`${prefix}.${name}`, f32Tensor(t.shape, (await t.data()) as Float32Array)])
  }
  return [
    {name: OPTIMIZER_FILE, write: (p) => writeSafetensors(p, host, meta)},
    {name: TRAINER_STATE_FILE, write: (p) => writeFile(p, JSON.stringify(trainerState, null, 2) + '\n')},
  ]
}

/** Restores the optimiser from dir and returns the trainer state; null when dir has none. */
export async function loadTrainingState(dir: string, opt: AdamW): Promise<Record<string, unknown> | null> {
  const statePath = join(dir, TRAINER_STATE_FILE)
  if (!(await stat(statePath).then(() => true, () => false))) return null
  const state = await readState(statePath) // the small file first: a truncated one is said before the optimiser is read
  const file = await readSafetensors(join(dir, OPTIMIZER_FILE))
  const step = Number(file.metadata.step)
  if (!Number.isInteger(step) || step < 0) throw new SpanError(`${join(dir, OPTIMIZER_FILE)}: metadata has no valid "step"`)
  const m = new Map<string, tf.Tensor>()
  const v = new Map<string, tf.Tensor>()
  for (const [name, t] of file.tensors) {
    const [prefix, ...rest] = name.split('.')
    const target = prefix === 'exp_avg' ? m : prefix === 'exp_avg_sq' ? v : null
    if (!target) throw new SpanError(`${join(dir, OPTIMIZER_FILE)}: unexpected tensor "${name}"`)
    target.set(rest.join('.'), tf.tensor(toFloat32(t), t.shape, 'float32'))
  }
  opt.load(step, m, v)
  restoreScaler(opt, file.metadata, join(dir, OPTIMIZER_FILE))
  return state
}

/** trainer_state.json as an object; a truncated or garbled one is `PATH:LINE: invalid JSON at column C: …` (never V8's own text). */
async function readState(path: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readTextWhole(path, 'config')
  } catch (err) {
    throw readError(err, path)
  }
  const json = parseJsonText(text, path)
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new SpanError(`${path}: expected a JSON object (a corrupt checkpoint?)`)
  return json as Record<string, unknown>
}
