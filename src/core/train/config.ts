import {join, resolve} from 'node:path'
import {BACKEND_CHOICES, PRECISIONS} from '../engine/backend.js'
import {PRESETS, parseObjectives} from '../model/config.js'
import {MASK_SCHEMES, TAG_FILLS} from '../data/mask.js'
import {SpanError, UsageError} from '../stream/errors.js'
import {parseJsonText} from '../util/json.js'
import {readError} from '../util/fs-errors.js'
import {readTextWholeSync} from '../util/read-whole.js'
import {LOSS_SCALE_DEFAULTS, type LossScaleFlags, lossScaleProblem} from './loss-scale.js'

/** The resolved config saved beside every pre-training checkpoint. */
export const TRAIN_CONFIG_FILE = 'train_config.json'

/**
 * The one configuration of a pre-training run. Keys are the flag names of `span pretrain`, so
 * a --config FILE is written the way the command line is: {"batch-size": 32, "lr": 1e-4}.
 * Resolution order: DEFAULTS, then the resumed run's saved config (--resume), then --config
 * FILE, then flags given on the command line.
 */
export interface TrainConfig extends LossScaleFlags {
  input: string
  eval: string | null
  out: string
  vocab: string | null
  init: string | null // continue pre-training from these weights (fresh optimiser and schedule)
  preset: string
  layers: number | null
  hidden: number | null
  heads: number | null
  intermediate: number | null
  'max-len': number | null
  objectives: string
  lr: number
  warmup: number | null // null: min(10,000, 10% of max-steps), resolved by resolveWarmup
  'weight-decay': number
  clip: number
  'batch-size': number | 'auto' // auto: the largest micro-batch that fits (run-plan.ts), a number once resolved
  accumulate: number
  'effective-batch': number | null // examples per step; null: batch-size × accumulate (32 with auto)
  'max-steps': number
  seed: number
  'log-every': number
  'eval-every': number
  'save-every': number
  keep: number // checkpoint-STEP/ directories kept, the newest
  tensorboard: string | null // TensorBoard event files go here
  backend: string
  threads: number | null // native backend threads; null: every core
  device: number | null // cuda backend GPU; null: SPAN_CUDA_DEVICE, else 0
  precision: string | null // cuda backend matrix products: fp32 | tf32 | bf16 | fp16; null: SPAN_CUDA_PRECISION, else by compute capability (cuda/bf16.ts)
  scheme: string
  p: number
  'max-span': number
  ratio: number
  'tagged-prob': number // entity, noun-phrase: the chance a draw masks a whole tagged span (docs/algorithms.md#tagged-masking)
  'tag-labels': string | null // entity, noun-phrase: comma-separated labels that count; null: NP for noun-phrase, the others for entity
  fill: string // entity, noun-phrase: the other draws, span (the reference code) or whole-word (the paper)
  dropout: number | null // hidden and attention dropout; null: the model config's (issue 14)
}

/** SpanBERT §4.2 / BERT §A.2 where they say; small-machine choices otherwise (see the flags). */
export const DEFAULTS: TrainConfig = {
  input: '-', eval: null, out: '', vocab: null, init: null,
  preset: 'base', layers: null, hidden: null, heads: null, intermediate: null, 'max-len': null,
  objectives: 'mlm,sbo', lr: 1e-4, warmup: null, 'weight-decay': 0.01, clip: 1.0,
  'batch-size': 'auto', accumulate: 1, 'effective-batch': null, 'max-steps': 2_400_000, seed: 1,
  'log-every': 10, 'eval-every': 1000, 'save-every': 1000, keep: 1, tensorboard: null, backend: 'auto', threads: null, device: null, precision: null,
  scheme: 'span', p: 0.2, 'max-span': 10, ratio: 0.15, 'tagged-prob': 0.5, 'tag-labels': null, fill: 'span', dropout: null, ...LOSS_SCALE_DEFAULTS,
}

/** The most examples (or micro-batches) a step may take: a larger setting is refused before any allocation (cli/limits.ts MAX_BATCH). */
export const MAX_STEP_ROWS = 2 ** 20

/** Keys that describe the run's data and model, fixed once a run starts (a resume keeps them). */
export const FIXED_ON_RESUME: (keyof TrainConfig)[] = [
  'preset', 'layers', 'hidden', 'heads', 'intermediate', 'objectives', 'seed', 'batch-size', 'accumulate', 'effective-batch',
  'scheme', 'p', 'max-span', 'ratio', 'tagged-prob', 'tag-labels', 'fill',
]

/** Settings as a source gives them (a file, the flags): any subset, values not yet checked. */
export type TrainConfigValues = Partial<Record<keyof TrainConfig, unknown>>

/** Reads a --config FILE: a JSON object whose keys are flag names. */
export function readConfigFile(path: string): TrainConfigValues {
  let text: string
  try {
    text = readTextWholeSync(path, 'config')
  } catch (err) {
    throw readError(err, path, 'config file not found')
  }
  const json = parseJsonText(text, path)
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new SpanError(`${path}: expected a JSON object of flag names`)
  return json as TrainConfigValues
}

/** Layers the sources in order (later wins), then checks every value against where it came from. */
export function resolveConfig(layers: {name: string; values: TrainConfigValues}[]): TrainConfig {
  const out: Record<string, unknown> = {...DEFAULTS}
  const origin: Record<string, string> = {}
  for (const {name, values} of layers) {
    for (const [k, v] of Object.entries(values)) {
      if (!Object.hasOwn(DEFAULTS, k)) throw new SpanError(`${name}: unknown setting ${JSON.stringify(k)} (settings are the flag names of span pretrain)`)
      if (v !== undefined) [out[k], origin[k]] = [v, name]
    }
  }
  return checkTrainConfig(out as unknown as TrainConfig, origin)
}

/** The warm-up actually used: --warmup, else 10,000 steps capped at 10% of a short run (docs/algorithms.md#model-and-optimisation). */
export function resolveWarmup(c: TrainConfig): number {
  return c.warmup ?? Math.min(10_000, Math.ceil(0.1 * c['max-steps']))
}

/**
 * Checks every setting. A bad value given as a flag (origin `flags`) is a usage error (exit 2,
 * `--k …`); one read from a file (--config, a resumed run's train_config.json) is that file's
 * data error (exit 1, naming it).
 */
export function checkTrainConfig(c: TrainConfig, origin: Record<string, string> = {}): TrainConfig {
  const bad = (k: string, want: string) => {
    const got = JSON.stringify((c as unknown as Record<string, unknown>)[k])
    if (origin[k] === 'flags') return new UsageError(`--${k} must be ${want}, got ${got}`)
    return new SpanError(`${origin[k] ? `${origin[k]}: ` : ''}setting "${k}" must be ${want}, got ${got}`)
  }
  const ints: [keyof TrainConfig, number, boolean, number?][] = [
    ['accumulate', 1, false, MAX_STEP_ROWS], ['effective-batch', 1, true, MAX_STEP_ROWS], ['max-steps', 1, false], ['log-every', 1, false],
    ['eval-every', 1, false], ['save-every', 1, false], ['keep', 1, false], ['max-span', 1, false], ['seed', 0, false],
    ['layers', 1, true], ['hidden', 1, true], ['heads', 1, true], ['intermediate', 1, true], ['max-len', 3, true], ['warmup', 0, true], ['threads', 1, true], ['device', 0, true],
  ]
  for (const [k, min, nullable, max = Number.MAX_SAFE_INTEGER] of ints) {
    const v = c[k]
    if (nullable && v === null) continue
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(k, `an integer in [${min}, ${max}]`)
  }
  const bs = c['batch-size']
  if (bs !== 'auto' && !(typeof bs === 'number' && Number.isInteger(bs) && bs >= 1 && bs <= MAX_STEP_ROWS)) throw bad('batch-size', `auto or an integer in [1, ${MAX_STEP_ROWS}]`)
  const nums: [keyof TrainConfig, number, number][] = [['lr', 0, 10], ['weight-decay', 0, 1], ['clip', 0, Infinity], ['p', 1e-9, 1], ['ratio', 0, 1], ['tagged-prob', 0, 1]]
  for (const [k, lo, hi] of nums) {
    const v = c[k]
    if (typeof v !== 'number' || !(v >= lo && v <= hi)) throw bad(k, `a number in [${lo}, ${hi}]`)
  }
  if (c.dropout !== null && !(typeof c.dropout === 'number' && c.dropout >= 0 && c.dropout < 1)) throw bad('dropout', 'a number in [0, 1)')
  if (typeof c.preset !== 'string' || !Object.hasOwn(PRESETS, c.preset)) throw bad('preset', `one of ${Object.keys(PRESETS).join(', ')}`)
  if (!(BACKEND_CHOICES as readonly string[]).includes(c.backend)) throw bad('backend', `one of ${BACKEND_CHOICES.join(', ')}`)
  if (c.precision !== null && !(PRECISIONS as readonly string[]).includes(c.precision)) throw bad('precision', `one of ${PRECISIONS.join(', ')}`)
  checkMaskSettings(c, bad)
  if (typeof c.objectives !== 'string') throw bad('objectives', 'a list such as "mlm,sbo"')
  try {
    c.objectives = parseObjectives(c.objectives).join(',')
  } catch (err) {
    throw bad('objectives', `a list of mlm, sbo, nsp that includes mlm (${(err as Error).message})`)
  }
  if (lossScaleProblem(c)) throw bad(...lossScaleProblem(c)!) // spread-ok: a [message, flag] pair; fp16's loss scaler (loss-scale.ts)
  checkHeads(c, origin)
  for (const k of ['input', 'out'] as const) if (typeof c[k] !== 'string') throw bad(k, 'a path')
  for (const k of ['eval', 'vocab', 'init', 'tensorboard'] as const) if (c[k] !== null && typeof c[k] !== 'string') throw bad(k, 'a path')
  return c
}

/** The masking scheme of blocks and the tagged schemes' settings besides --tagged-prob (span mask's flags of the same names). */
function checkMaskSettings(c: TrainConfig, bad: (k: string, want: string) => Error): void {
  if (!(MASK_SCHEMES as readonly string[]).includes(c.scheme)) throw bad('scheme', `one of ${MASK_SCHEMES.join(', ')}`)
  if (!(TAG_FILLS as readonly string[]).includes(c.fill)) throw bad('fill', `one of ${TAG_FILLS.join(', ')}`)
  const labels = c['tag-labels']
  if (labels !== null && !(typeof labels === 'string' && tagLabelList(labels).length > 0)) throw bad('tag-labels', 'a comma-separated list of tag labels')
}

/** --tag-labels "PER, ORG" as labels (blanks dropped), as span mask reads it. */
export function tagLabelList(s: string): string[] {
  return s
    .split(',')
    .map((l) => l.trim())
    .filter((l) => l !== '')
}

/** The model's hidden size must split evenly over its heads; checked before any data is read. */
function checkHeads(c: TrainConfig, origin: Record<string, string>): void {
  const p = PRESETS[c.preset as keyof typeof PRESETS]
  const [hidden, heads] = [c.hidden ?? p.hidden_size, c.heads ?? p.num_attention_heads]
  if (hidden % heads === 0) return
  const why = `hidden size ${hidden} is not a multiple of ${heads} attention heads (each head takes hidden/heads dimensions)`
  const from = [origin.hidden, origin.heads].find((o) => o !== undefined && o !== 'flags')
  throw from ? new SpanError(`${from}: ${why}`) : new UsageError(`--hidden, --heads: ${why}`)
}

/** Flags of span pretrain that are not settings of the run. */
const NOT_SETTINGS = new Set(['input', 'output', 'resume', 'config', 'stop-at'])

/**
 * The one config of a run: defaults, then the resumed run's train_config.json (resumeDir, a
 * checkpoint directory), then --config FILE, then the flags given (`flags`: oclif's parse, absent
 * flags undefined; `file`: the data file argument). A resumed run keeps FIXED_ON_RESUME.
 */
export function resolvePretrainConfig(file: string | undefined, flags: Record<string, unknown>, resumeDir: string | null): TrainConfig {
  return resolvePretrainRun(file, flags, resumeDir).config
}

/**
 * resolvePretrainConfig, with `inherited`: the settings among INHERITABLE whose value only the
 * resumed run's saved config gave (typed neither as a flag nor in --config): the backend start
 * re-resolves those for the resumed run's backend (backend.ts BackendOptions.inherited).
 */
export function resolvePretrainRun(file: string | undefined, flags: Record<string, unknown>, resumeDir: string | null): {config: TrainConfig; inherited: string[]} {
  const given: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(flags)) if (!NOT_SETTINGS.has(k) && v !== undefined && k in DEFAULTS) given[k] = v
  if (file !== undefined) given.input = file
  else if (flags.input !== '-' || !resumeDir) given.input = flags.input
  const layers: {name: string; values: TrainConfigValues}[] = []
  if (resumeDir) layers.push({name: join(resumeDir, TRAIN_CONFIG_FILE), values: savedTrainConfig(resumeDir)})
  if (flags.config) layers.push({name: flags.config as string, values: readConfigFile(flags.config as string)})
  layers.push({name: 'flags', values: given})
  if (resumeDir) checkResumable(layers, resumeDir)
  const inherited = resumeDir ? INHERITABLE.filter((k) => layers[0].values[k] != null && layers.slice(1).every((l) => l.values[k] === undefined)) : []
  return {config: absolutePaths(resolveConfig(layers)), inherited}
}

/** Settings a resumed run saved as resolved that depend on the backend it ran on. */
const INHERITABLE = ['device', 'precision'] as const

/**
 * The run's input paths made absolute (against the working directory), so that the saved
 * config serves `--resume` from anywhere; an older run's relative ones are read as they were.
 */
function absolutePaths(c: TrainConfig): TrainConfig {
  if (c.input !== '-' && c.input !== '') c.input = resolve(c.input)
  for (const k of ['eval', 'vocab', 'init', 'tensorboard'] as const) if (c[k] !== null) c[k] = resolve(c[k])
  return c
}

function savedTrainConfig(dir: string): TrainConfigValues {
  try {
    return readConfigFile(join(dir, TRAIN_CONFIG_FILE))
  } catch {
    throw new SpanError(`${dir}: no ${TRAIN_CONFIG_FILE} to resume from (not a span pretrain checkpoint, or a corrupt one)`)
  }
}

/** A resumed run keeps its model and data settings: changing them would not continue that run. */
function checkResumable(layers: {name: string; values: TrainConfigValues}[], dir: string): void {
  const saved = layers[0].values
  for (const {name, values} of layers.slice(1)) {
    if (values['batch-size'] === 'auto' && saved['batch-size'] !== undefined) delete values['batch-size'] // auto chose the saved one
    for (const k of FIXED_ON_RESUME) {
      if (values[k] !== undefined && saved[k] !== undefined && JSON.stringify(values[k]) !== JSON.stringify(saved[k])) {
        const msg = `${name}: "${k}" is ${JSON.stringify(values[k])} but the run in ${dir} has ${JSON.stringify(saved[k])}; a resumed run keeps it`
        throw new SpanError(msg, name === 'flags' ? 2 : 1) // a flag typed against the run: a usage error; a --config file's content: a data error
      }
    }
  }
}
