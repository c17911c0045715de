import * as tf from '@tensorflow/tfjs'
import {stat, writeFile} from 'node:fs/promises'
import {type CheckpointFile, writeFilesAtomically} from '../util/atomic.js'
import {join, resolve} from 'node:path'
import {Rng} from '../util/rng.js'
import {SpanError} from '../stream/errors.js'
import {type BertConfig, type Objective, configFromJson, configToJson} from './config.js'
import {type ParamSpec, ParamStore, checkShape, initTensor} from './params.js'
import {SpanBertForPreTraining} from './pretraining.js'
import {BertEncoder} from './bert.js'
import {type HostTensor, f32Tensor, toFloat32, writeSafetensors} from './safetensors.js'
import {loadVocab} from '../text/vocab.js'
import {resolveVocab} from './vocab-file.js'
import {readWeights} from './weights.js'
import {parseJsonText} from '../util/json.js'
import {readError} from '../util/fs-errors.js'
import {readTextWhole, readWholeSync} from '../util/read-whole.js'

export const CONFIG_FILE = 'config.json'
export const WEIGHTS_FILE = 'model.safetensors'
export const VOCAB_FILE = 'vocab.txt'

// A checkpoint is written as one unit (temporary directory, fsync, swap); see util/atomic.ts.
export {type CheckpointFile, MANIFEST_FILE, recoverDir, recoverRun, recoverSaves, verifyManifest, writeFilesAtomically} from '../util/atomic.js'

/** The model's parameters as safetensors entries (HF names; the tied decoder is not stored, as HF does). */
export async function paramsToHost(params: ParamStore): Promise<[string, HostTensor][]> {
  const out: [string, HostTensor][] = []
  for (const [name, v] of params.entries()) out.push([name, f32Tensor(v.shape, (await v.data()) as Float32Array)])
  return out
}

export const TOKENIZER_CONFIG = 'tokenizer_config.json'
export const SPECIAL_TOKENS_MAP = 'special_tokens_map.json'
/** BERT's special tokens, as transformers' special_tokens_map.json names them. */
export const SPECIAL_TOKENS = {unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]'}

/**
 * vocab.txt with the two files transformers' BertTokenizer(Fast).from_pretrained reads beside
 * it: tokenizer_config.json (do_lower_case, model_max_length) and special_tokens_map.json.
 */
export function tokenizerFiles(vocabPath: string, maxLength: number): CheckpointFile[] {
  const config = {tokenizer_class: 'BertTokenizer', do_lower_case: !isCased(vocabPath), model_max_length: maxLength}
  return [
    {name: VOCAB_FILE, write: (p) => writeFile(p, vocabBytes(vocabPath))},
    {name: TOKENIZER_CONFIG, write: (p) => writeFile(p, JSON.stringify(config, null, 2) + '\n')},
    {name: SPECIAL_TOKENS_MAP, write: (p) => writeFile(p, JSON.stringify(SPECIAL_TOKENS, null, 2) + '\n')},
  ]
}

const vocabCache = new Map<string, Buffer>()
const casedCache = new Map<string, boolean>()

/**
 * A vocabulary file's bytes, read once per run: checkpoints write them from memory, so a resumed
 * run whose vocabulary sits in a checkpoint-STEP/ that --keep rotates away still writes it.
 */
export function vocabBytes(path: string): Buffer {
  let b = vocabCache.get(path)
  if (!b) {
    b = readWholeSync(path, 'vocabulary')
    vocabCache.set(path, b)
  }
  return b
}

/** Cased or not, as loadVocab decides; for a file that is not a full BERT vocabulary, whether any entry has capitals (once per run, as vocabBytes). */
function isCased(vocabPath: string): boolean {
  let cased = casedCache.get(vocabPath)
  if (cased === undefined) {
    try {
      cased = loadVocab(vocabPath).cased
    } catch {
      cased = vocabBytes(vocabPath).toString('utf-8').split('\n').some((t) => !t.startsWith('[') && t !== t.toLowerCase())
    }
    casedCache.set(vocabPath, cased)
  }
  return cased
}

/** The files of a model checkpoint: config.json, model.safetensors, vocab.txt and the tokenizer's two JSON files. */
export async function modelFiles(model: SpanBertForPreTraining, vocabPath: string): Promise<CheckpointFile[]> {
  const host = await paramsToHost(model.params)
  return [
    {name: CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(configToJson(model.config), null, 2) + '\n')},
    {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, host, {format: 'pt'})},
    ...tokenizerFiles(vocabPath, model.config.max_position_embeddings),
  ]
}

/** Saves a model checkpoint (plus any extra files, such as training state) into dir. */
export async function saveCheckpoint(dir: string, model: SpanBertForPreTraining, vocabPath: string, extra: CheckpointFile[] = []): Promise<void> {
  await writeFilesAtomically(dir, [...(await modelFiles(model, vocabPath)), ...extra])
}

export interface LoadOptions {
  /** replace the checkpoint's objectives (e.g. pre-train SBO on top of a Hugging Face BERT) */
  objectives?: Objective[]
  /** seeds the heads the checkpoint lacks */
  seed?: number
  /** the vocabulary file, for checkpoints without vocab.txt (--vocab) */
  vocab?: string
}

export interface LoadedCheckpoint {
  model: SpanBertForPreTraining
  vocabPath: string
  /** parameters absent from the checkpoint, freshly initialised (heads) */
  initialised: string[]
  /** checkpoint tensors the model does not use */
  ignored: string[]
}

/**
 * Loads a checkpoint directory: ours, or any Hugging Face BERT (config.json, weights in any
 * format readWeights reads, vocab.txt or --vocab). Absent heads are initialised; the encoder
 * must be complete.
 */
export async function loadCheckpoint(dir: string, opts: LoadOptions = {}): Promise<LoadedCheckpoint> {
  const config = await readConfig(dir, opts.objectives)
  const vocabPath = resolveVocab(dir, opts.vocab, config.vocab_size)
  const {tensors, source} = await readWeights(dir)
  return {...modelFromTensors(config, tensors, source, opts.seed ?? 0), vocabPath}
}

/** Parameters built from a checkpoint's tensors: the store, what was initialised, what was left unused. */
export interface ParamsFromTensors {
  params: ParamStore
  initialised: string[]
  ignored: string[]
}

/** Encoder parameters (embeddings and layers): every checkpoint a model loads from must supply them. */
export const isEncoderParam = (name: string): boolean => name.startsWith('bert.embeddings.') || name.startsWith('bert.encoder.')

/**
 * Parameters for `specs` from named host tensors (any HF naming variant, see normaliseNames):
 * taken where present (and, outside the encoder, where `fits` accepts them), else initialised
 * N(0, range) / zeros from `seed`; a missing encoder parameter is an error, and so is an encoder
 * tensor the config does not describe (a layer past num_hidden_layers). `strict` (a fine-tuned
 * model read to predict): every parameter must be there with its shape, heads included, since
 * config.json describes them all. The one loader behind every checkpoint a command reads.
 */
export function paramsFromTensors(
  specs: ParamSpec[], raw: Map<string, HostTensor>, source: string, seed: number, range: number,
  fits: (spec: ParamSpec, t: HostTensor) => boolean = () => true, strict = false,
): ParamsFromTensors {
  const tensors = normaliseNames(raw)
  checkDescribed(specs, tensors, source)
  if (strict) checkComplete(specs, tensors, source, fits)
  const params = new ParamStore()
  const rng = new Rng(seed)
  const initialised: string[] = []
  try {
    for (const spec of specs) {
      const t = tensors.get(spec.name)
      const encoder = isEncoderParam(spec.name)
      if (t && (encoder || fits(spec, t))) params.set(spec.name, hostToTensor(spec, t, source))
      else if (encoder) throw new SpanError(`${source}: missing encoder parameter "${spec.name}" (not a BERT checkpoint?)`)
      else {
        params.set(spec.name, initTensor(spec, range, rng))
        initialised.push(spec.name)
      }
    }
  } catch (err) {
    params.dispose()
    throw err
  }
  const known = new Set(specs.map((s) => s.name))
  return {params, initialised, ignored: [...tensors.keys()].filter((k) => !known.has(k))}
}

/** config.json and the weights disagree: in span's words, naming the tensor and the config field. */
const disagree = (source: string, what: string) => new SpanError(`${source}: ${what} (config.json and the weights disagree)`)

/** Every encoder tensor of the checkpoint is one the config describes (HF's position_ids buffer aside). */
function checkDescribed(specs: ParamSpec[], tensors: Map<string, HostTensor>, source: string): void {
  const known = new Set(specs.map((s) => s.name))
  for (const name of tensors.keys()) {
    if (!isEncoderParam(name) || known.has(name) || name.endsWith('.position_ids')) continue
    const layer = /^bert\.encoder\.layer\.(\d+)\./.exec(name)
    const layers = specs.filter((s) => /^bert\.encoder\.layer\.\d+\.attention\.self\.query\.weight$/.test(s.name)).length
    throw disagree(source, layer ? `"${name}" is in layer ${layer[1]}, config.json has num_hidden_layers ${layers}` : `"${name}" is not a parameter of the encoder config.json describes`)
  }
}

/** config.json's num_labels against the rows of the classifier it describes (a fine-tuned model read to predict, whose labels come from its run's settings). */
export function checkLabelCount(json: Record<string, unknown>, raw: Map<string, HostTensor>, source: string): void {
  const w = raw.get('classifier.weight')
  if (typeof json.num_labels === 'number' && w && w.shape[0] !== json.num_labels)
    throw disagree(source, `"classifier.weight" has ${w.shape[0]} rows, config.json's num_labels is ${json.num_labels}`)
}

/** The encoder's tensors against the config that describes them (export, which builds no model): all there, shapes equal, no others. */
export function checkEncoderWeights(config: BertConfig, raw: Map<string, HostTensor>, source: string): void {
  const specs = BertEncoder.specs(config)
  const tensors = normaliseNames(raw)
  checkDescribed(specs, tensors, source)
  checkComplete(specs, tensors, source, () => true)
}

/** Every parameter present with the shape the config gives it (a fine-tuned model read to predict). */
function checkComplete(specs: ParamSpec[], tensors: Map<string, HostTensor>, source: string, fits: (spec: ParamSpec, t: HostTensor) => boolean): void {
  for (const spec of specs) {
    const t = tensors.get(spec.name)
    if (!t) throw disagree(source, `no "${spec.name}", which config.json's model has`)
    const same = t.shape.length === spec.shape.length && t.shape.every((d, i) => d === spec.shape[i])
    if (!same || !fits(spec, t)) throw disagree(source, `"${spec.name}" has shape [${t.shape.join(', ')}], config.json's model [${spec.shape.join(', ')}]`)
  }
}

/**
 * A model from named host tensors (any HF naming variant); parameters the tensors lack are
 * initialised from seed, except encoder ones, which must be there.
 */
export function modelFromTensors(
  config: BertConfig, raw: Map<string, HostTensor>, source: string, seed: number,
): Omit<LoadedCheckpoint, 'vocabPath'> {
  const {params, initialised, ignored} = paramsFromTensors(SpanBertForPreTraining.specs(config), raw, source, seed, config.initializer_range)
  return {model: new SpanBertForPreTraining(config, params), initialised, ignored}
}

export async function readConfig(dir: string, objectives?: Objective[]): Promise<BertConfig> {
  const path = join(dir, CONFIG_FILE)
  let text: string
  try {
    text = await readTextWhole(path, 'config')
  } catch (err) {
    throw readError(err, dir, `not a checkpoint directory (no ${CONFIG_FILE})`)
  }
  const json = parseJsonText(text, path) // a truncated config.json: path:line: invalid JSON at column c
  const config = configFromJson(json, path)
  return objectives ? {...config, objectives} : config
}

/** A stored tensor as a float32 tf.Tensor, checked against its spec's shape (any float dtype). */
export function hostToTensor(spec: ParamSpec, t: HostTensor, source: string): tf.Tensor {
  checkShape(spec, t.shape, source)
  if (t.dtype === 'BOOL' || t.dtype.startsWith('I') || t.dtype === 'U8') {
    throw new SpanError(`${source}: "${spec.name}" is ${t.dtype}, expected a floating-point tensor`)
  }
  const values = toFloat32(t)
  checkFinite(values, spec.name, source)
  return tf.tensor(values, t.shape, 'float32')
}

/** Weights with NaN or ±Infinity (a diverged run, a corrupt file) are refused by tensor name: they would encode to nulls. */
export function checkFinite(values: Float32Array, name: string, source: string): void {
  let bad = 0
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) bad++
  if (bad > 0) throw new SpanError(`${source}: "${name}" holds ${bad} of ${values.length} values that are NaN or infinite (a diverged or corrupt checkpoint)`)
}

/**
 * Hugging Face name variants onto ours: old TF-converted LayerNorm `gamma`/`beta`,
 * checkpoints of a bare BertModel (no `bert.` prefix), and the MLM bias saved under its
 * tied alias `cls.predictions.decoder.bias`.
 */
export function normaliseNames(tensors: Map<string, HostTensor>): Map<string, HostTensor> {
  const out = new Map<string, HostTensor>()
  for (const [name, t] of tensors) {
    let n = name.replace(/\.gamma$/, '.weight').replace(/\.beta$/, '.bias')
    if (/^(embeddings|encoder|pooler)\./.test(n)) n = `bert.${n}`
    out.set(n, t)
  }
  const decoderBias = out.get('cls.predictions.decoder.bias')
  if (decoderBias && !out.has('cls.predictions.bias')) out.set('cls.predictions.bias', decoderBias)
  return out
}

/** A checkpoint's vocabulary file: --vocab when given, else its vocab.txt (resolveVocab's errors otherwise). */
export async function checkpointVocab(dir: string, vocabFlag?: string): Promise<string> {
  return resolveVocab(dir, vocabFlag, (await readConfig(dir)).vocab_size)
}

/** True when dir holds a checkpoint (a config.json). */
export async function isCheckpoint(dir: string): Promise<boolean> {
  return stat(join(resolve(dir), CONFIG_FILE)).then(() => true, () => false)
}
