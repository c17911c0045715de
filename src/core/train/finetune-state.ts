import {join} from 'node:path'
import type {CheckpointFile} from '../model/checkpoint.js'
import type {ParamStore} from '../model/params.js'
import {SpanError} from '../stream/errors.js'
import type {AdamW} from './optim.js'
import {TRAINER_STATE_FILE, loadTrainingState, trainingStateFiles} from './state.js'

export const FINETUNE_STATE_FORMAT = 'span-finetune-state/1'

/**
 * The fine-tuning loop's resumable state (trainer_state.json; the optimiser's moments go to
 * optimizer.safetensors): where it stands (the order of an epoch is a function of seed and
 * epoch, so the epoch and the steps done in it fix the data position), dropout's generator,
 * and the best-checkpoint and patience bookkeeping.
 */
export interface FinetuneState {
  format: typeof FINETUNE_STATE_FORMAT
  step: number // updates done
  epoch: number // 0-based epoch the next step belongs to
  batch: number // steps done in that epoch
  dropout_rng: number[] // four state words
  best: number | null
  best_step: number | null
  stale: number // evaluations since the best
  world?: number // processes the run trained on (data-parallel; absent: 1)
}

export async function stateFiles(opt: AdamW, s: FinetuneState): Promise<CheckpointFile[]> {
  return trainingStateFiles(opt, {...s})
}

/** Restores the optimiser from dir (checked against the model's parameters) and returns the loop's state. */
export async function loadFinetuneState(dir: string, opt: AdamW, params: ParamStore): Promise<FinetuneState> {
  const raw = await loadTrainingState(dir, opt)
  if (raw === null) throw new SpanError(`${dir}: no training state to resume from (no ${TRAINER_STATE_FILE}; a best/ or model-only directory?)`)
  for (const [name, t] of [...opt.m, ...opt.v]) {
    if (!params.has(name) || params.get(name).shape.join(',') !== t.shape.join(',')) {
      throw new SpanError(`${dir}: optimizer.safetensors does not match the model ("${name}"); a corrupt or mismatched checkpoint`)
    }
  }
  return checkFinetuneState(raw, join(dir, TRAINER_STATE_FILE))
}

function checkFinetuneState(raw: Record<string, unknown>, path: string): FinetuneState {
  const s = raw as Partial<FinetuneState>
  const bad = (what: string) => new SpanError(`${path}: ${what}; a corrupt checkpoint or not one of span finetune`)
  if (s.format !== FINETUNE_STATE_FORMAT) throw bad(`format is ${JSON.stringify(s.format)}, expected "${FINETUNE_STATE_FORMAT}"`)
  for (const k of ['step', 'epoch', 'batch', 'stale'] as const) {
    if (!Number.isInteger(s[k]) || (s[k] as number) < 0) throw bad(`no valid "${k}"`)
  }
  const words = s.dropout_rng
  if (!Array.isArray(words) || words.length !== 4 || !words.every((w) => Number.isInteger(w) && w >= 0 && w < 2 ** 32))
    throw bad('no valid "dropout_rng" state')
  if (s.best !== null && typeof s.best !== 'number') throw bad('no valid "best"')
  return s as FinetuneState
}
