import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {type CheckpointFile, modelFiles, writeFilesAtomically} from '../model/checkpoint.js'
import type {SpanBertForPreTraining} from '../model/pretraining.js'
import {SpanError} from '../stream/errors.js'
import {TRAIN_CONFIG_FILE, type TrainConfig} from './config.js'
import type {FileFingerprint} from './index-file.js'
import type {AdamW} from './optim.js'
import type {SamplerState} from './sampler.js'
import {TRAINER_STATE_FILE, trainingStateFiles} from './state.js'

export const STATE_FORMAT = 'span-pretrain-state/1'

/** The trainer's own resumable state (trainer_state.json); the optimiser's is in optimizer.safetensors. */
export interface TrainerState {
  format: typeof STATE_FORMAT
  step: number
  sampler: SamplerState
  dropout_rng: number[] // the dropout generator's four state words
  data: FileFingerprint
  config: TrainConfig
  best_eval_loss?: number | null // the lowest evaluation loss so far (the model in best/)
  world?: number // processes the run trained on (issue 14; absent: 1)
}

/** How files are written; tests swap it for one that fails (a full disk). */
export type FileHook = (f: CheckpointFile) => CheckpointFile

/**
 * Saves model, vocabulary, optimiser moments, trainer state and the resolved config into dir.
 * Every file goes to a temporary name first and all are renamed only once all are written
 * (writeFilesAtomically), so a failure (a full disk) leaves the previous checkpoint as it was.
 */
export async function saveTrainingCheckpoint(
  dir: string, model: SpanBertForPreTraining, opt: AdamW, vocabPath: string, state: TrainerState, hook: FileHook = (f) => f,
): Promise<void> {
  const files: CheckpointFile[] = [
    ...(await modelFiles(model, vocabPath)),
    ...(await trainingStateFiles(opt, state as unknown as Record<string, unknown>)),
    {name: TRAIN_CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(state.config, null, 2) + '\n')},
  ]
  try {
    await writeFilesAtomically(dir, files.map(hook))
  } catch (err) {
    throw saveError(dir, state.step, err as NodeJS.ErrnoException)
  }
}

function saveError(dir: string, step: number, err: NodeJS.ErrnoException): Error {
  const why: Record<string, string> = {
    ENOSPC: 'no space left on device', EDQUOT: 'disk quota exceeded', EACCES: 'permission denied',
    EROFS: 'read-only file system', ENOTDIR: 'not a directory', EEXIST: 'a file is in the way',
  }
  const reason = (err.code && why[err.code]) ? `${why[err.code]} (${err.code})` : err.message.split('\n')[0]
  return new SpanError(`${dir}: could not save the checkpoint of step ${step}: ${reason}; any previous checkpoint there is unchanged`)
}

/** Checks a trainer_state.json read back by the model engineer's loadTrainingState. */
export function checkTrainerState(raw: Record<string, unknown> | null, dir: string): TrainerState {
  const path = join(dir, TRAINER_STATE_FILE)
  if (raw === null) throw new SpanError(`${dir}: no training state to resume from (no ${TRAINER_STATE_FILE}; a model-only checkpoint?)`)
  const s = raw as Partial<TrainerState>
  const bad = (what: string) => new SpanError(`${path}: ${what}; a corrupt checkpoint or not one of span pretrain`)
  if (s.format !== STATE_FORMAT) throw bad(`format is ${JSON.stringify(s.format)}, expected "${STATE_FORMAT}"`)
  if (!Number.isInteger(s.step) || (s.step as number) < 0) throw bad('no valid "step"')
  if (!s.sampler || !Number.isInteger(s.sampler.epoch) || !Number.isInteger(s.sampler.cursor)) throw bad('no valid "sampler" position')
  const words = s.dropout_rng
  if (!Array.isArray(words) || words.length !== 4 || !words.every((w) => Number.isInteger(w) && w >= 0 && w < 2 ** 32)) {
    throw bad('no valid "dropout_rng" state')
  }
  if (!s.data || typeof s.data.sha256 !== 'string') throw bad('no "data" fingerprint')
  if (!s.config || typeof s.config !== 'object') throw bad('no "config"')
  return s as TrainerState
}
