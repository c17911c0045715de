import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {type CheckpointFile, SPECIAL_TOKENS, SPECIAL_TOKENS_MAP} from '../model/checkpoint.js'
import {SpanError} from '../stream/errors.js'
import {parseJsonText} from '../util/json.js'
import {readError} from '../util/fs-errors.js'
import {readTextWhole} from '../util/read-whole.js'
import type {LossScaleFlags} from './loss-scale.js'

export const FINETUNE_CONFIG_FILE = 'finetune_config.json'
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json'

/**
 * The settings of the fine-tuning loop, the same for every task; a task's config adds its own
 * keys (SquadFinetuneConfig, GlueFinetuneConfig). Keys are flag names; the whole resolved config
 * is printed to stderr and saved as finetune_config.json beside every checkpoint.
 */
export interface FinetuneSettings extends Partial<LossScaleFlags> {
  task: string
  init: string
  train: string
  dev: string | null
  out: string
  cased: boolean
  'max-len': number
  lr: number
  'warmup-proportion': number
  'weight-decay': number
  clip: number
  epochs: number
  'batch-size': number
  accumulate: number
  seed: number
  backend: string
  /** native backend threads; null: every core */
  threads?: number | null
  /** the matrix products' precision as resolved when the loop starts (fp32 | tf32 | bf16 | fp16; backend.ts backendPrecision) */
  precision?: string | null
  'log-every': number
  /** evaluate (and checkpoint) every N steps besides each epoch's end; null: epoch ends only */
  'eval-every'?: number | null
  /** checkpoint-STEP/ directories kept (the newest); best/ is kept besides */
  keep?: number
  /** stop after this many evaluations without a better dev score; null: never */
  patience?: number | null
  /** train on the first N training units only; null: all */
  'max-train-examples'?: number | null
  /** batch units of similar length together (seeded, reproducible) */
  'group-by-length'?: boolean
  /** --dropout: hidden and attention dropout of the run; null: the model config's */
  dropout?: number | null
  /** the SHA-256 of --train and --dev, checked when the run is resumed */
  data_sha256?: {train: string; dev: string | null}
}

/** The loop's settings that a resumed run must share with the run it continues. */
export const FIXED_ON_RESUME_FT = [
  'task',
  'lr',
  'warmup-proportion',
  'weight-decay',
  'clip',
  'epochs',
  'batch-size',
  'accumulate',
  'seed',
  'max-len',
  'max-train-examples',
  'group-by-length',
] as const

/** The flag values the loop settings default to when a config predates them. */
export const LOOP_DEFAULTS = {'eval-every': null, keep: 1, patience: null, 'max-train-examples': null, 'group-by-length': false} as const

/**
 * Reads a checkpoint's finetune_config.json (the one reader of it): the run's settings plus
 * the state saved with them (epoch, step, dev_scores). A directory without one (a Hugging Face
 * checkpoint) gives {}; an unreadable one is an error.
 */
export async function readFinetuneConfig(dir: string): Promise<Record<string, unknown>> {
  const path = join(dir, FINETUNE_CONFIG_FILE)
  let text: string
  try {
    text = await readTextWhole(path, 'config')
  } catch (err) {
    if ((err as {code?: string}).code === 'ENOENT') return {} // a model not fine-tuned by span
    throw readError(err, path)
  }
  const json = parseJsonText(text, path)
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new SpanError(`${path}: not a JSON object`)
  return json as Record<string, unknown>
}

/** A number a saved config holds under key, else dflt. */
export function savedNumber(saved: Record<string, unknown>, key: string, dflt: number): number {
  return typeof saved[key] === 'number' ? (saved[key] as number) : dflt
}

/** A resumed run must be the run it continues: its loop settings (and the task's own fixed ones) unchanged. */
export function checkResumeConfig(saved: Record<string, unknown>, now: Record<string, unknown>, dir: string, extra: readonly string[] = []): void {
  for (const k of [...FIXED_ON_RESUME_FT, ...extra]) {
    const a = saved[k] ?? (LOOP_DEFAULTS as Record<string, unknown>)[k] ?? null
    const b = now[k] ?? (LOOP_DEFAULTS as Record<string, unknown>)[k] ?? null
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      throw new SpanError(`--${k} is ${JSON.stringify(b)} but the run in ${dir} has ${JSON.stringify(a)}; a resumed run keeps it`)
    }
  }
}

/** tokenizer_config.json and special_tokens_map.json (Hugging Face's, from the run's casing and --max-len) and finetune_config.json (the config with `state` merged in). */
export function configFiles(c: FinetuneSettings, state: Record<string, unknown>): CheckpointFile[] {
  const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n'
  return [
    {
      name: TOKENIZER_CONFIG_FILE,
      write: (p) => writeFile(p, json({do_lower_case: !c.cased, tokenizer_class: 'BertTokenizer', model_max_length: c['max-len']})),
    },
    {name: SPECIAL_TOKENS_MAP, write: (p) => writeFile(p, json(SPECIAL_TOKENS))},
    {name: FINETUNE_CONFIG_FILE, write: (p) => writeFile(p, json({...c, ...state}))},
  ]
}

/** A vocabulary file's bytes, read once per run (the model layer's, re-exported for the tasks). */
export {vocabBytes} from '../model/checkpoint.js'
