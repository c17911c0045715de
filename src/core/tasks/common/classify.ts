/**
 * What the classification tasks here share (TACRED, NLI, SWAG): a unit is an encoded sequence
 * `[CLS] a [SEP] (b [SEP])` with its class; batches, predictions and the model come from the
 * GLUE classifier (model/classifier.ts, BERT §4.1), so these tasks add no model code.
 */
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {Rng} from '../../util/rng.js'
import {type CheckpointFile, VOCAB_FILE, WEIGHTS_FILE, checkLabelCount} from '../../model/checkpoint.js'
import {
  BertForSequenceClassification,
  type ClsHostBatch,
  type HeadConfig,
  classifierFiles,
  classifierFromTensors,
  readConfigJson,
} from '../../model/classifier.js'
import {type BertConfig, type PresetName, presetConfig} from '../../model/config.js'
import {WORD_EMBEDDINGS} from '../../model/heads.js'
import {normals} from '../../model/params.js'
import {type HostTensor, f32Tensor, readSafetensors, toFloat32} from '../../model/safetensors.js'
import {SpanError} from '../../stream/errors.js'
import {type FinetuneSettings, configFiles, vocabBytes} from '../../train/finetune-config.js'
import {type GlueFeature, collateGlue, truncateSeqPair} from '../glue/features.js'
import {predictValues} from '../glue/predict.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'

export interface ClassUnit {
  ids: Int32Array
  /** first position of segment 1 (ids.length for one segment) */
  secondStart: number
  label: number | null
}

const asGlue = (u: ClassUnit): GlueFeature => ({index: '', ids: u.ids, secondStart: u.secondStart, spans: [], label: u.label})

/** A padded batch of units (labels when every unit has one). */
export function collateUnits(units: ClassUnit[], padId: number): ClsHostBatch {
  return collateGlue(units.map(asGlue), padId, null, false)
}

/** The argmax class of every unit, dropout off. */
export function predictClasses(model: BertForSequenceClassification, units: ClassUnit[], batchSize: number, padId: number): Promise<number[]> {
  return predictValues(model, units.map(asGlue), batchSize, padId)
}

/** `[CLS] a [SEP] b [SEP]` (or `[CLS] a [SEP]`), cut with BERT's _truncate_seq_pair to maxLen. */
export function pairUnit(tok: WordPieceTokenizer, a: string, b: string | null, maxLen: number, label: number | null): ClassUnit {
  const {cls, sep} = tok.vocab.special
  const x = tok.encode(a)
  const y = b === null ? null : tok.encode(b)
  if (y) truncateSeqPair(x, y, maxLen - 3)
  else x.length = Math.min(x.length, maxLen - 2)
  const ids = [cls, ...x, sep, ...(y ? [...y, sep] : [])]
  return {ids: Int32Array.from(ids), secondStart: y ? x.length + 2 : ids.length, label}
}

/**
 * The classifier to fine-tune: a checkpoint's encoder (word embeddings grown by `extraRows`
 * new N(0, initializer_range) rows for new marker tokens) or a fresh --preset model.
 */
export async function classifierFor(
  dir: string | null,
  preset: string | undefined,
  head: HeadConfig,
  vocabSize: number,
  maxLen: number,
  seed: number,
  log: (l: string) => void,
  strict = false, // predict: every parameter there with its shape
): Promise<BertForSequenceClassification> {
  if (!dir) {
    const config: BertConfig = presetConfig(preset as PresetName, vocabSize, {max_position_embeddings: Math.max(512, maxLen)})
    return BertForSequenceClassification.init(config, head, seed)
  }
  const {config, json} = await readConfigJson(dir)
  const file = await readSafetensors(join(dir, WEIGHTS_FILE))
  if (strict) checkLabelCount(json, file.tensors, join(dir, WEIGHTS_FILE))
  if (vocabSize > config.vocab_size) file.tensors.set(WORD_EMBEDDINGS, grownRows(file.tensors.get(WORD_EMBEDDINGS), vocabSize, config, seed, dir))
  const loaded = classifierFromTensors({...config, vocab_size: Math.max(vocabSize, config.vocab_size)}, head, file.tensors, dir, seed, strict)
  if (loaded.initialised.length) log(`initialised ${loaded.initialised.join(', ')}`)
  if (maxLen > config.max_position_embeddings) {
    loaded.model.dispose()
    throw new SpanError(`--max-len ${maxLen} exceeds ${dir}'s ${config.max_position_embeddings} positions (max_position_embeddings)`)
  }
  return loaded.model
}

/** The word-embedding table with new rows appended up to `rows`. */
function grownRows(t: HostTensor | undefined, rows: number, c: BertConfig, seed: number, dir: string): HostTensor {
  if (!t) throw new SpanError(`${dir}: no ${WORD_EMBEDDINGS} in the checkpoint`)
  const old = toFloat32(t) // [V, H]
  const data = new Float32Array(rows * c.hidden_size)
  data.set(old)
  data.set(normals((rows - t.shape[0]) * c.hidden_size, c.initializer_range, new Rng(seed + 7)), old.length)
  return f32Tensor([rows, c.hidden_size], data)
}

/** config.json + model.safetensors + vocab.txt + tokenizer_config.json + finetune_config.json. */
export async function classifierCheckpoint(
  model: BertForSequenceClassification,
  vocabPath: string,
  c: FinetuneSettings,
  state: Record<string, unknown>,
): Promise<CheckpointFile[]> {
  return [...(await classifierFiles(model)), {name: VOCAB_FILE, write: (p: string) => writeFile(p, vocabBytes(vocabPath))}, ...configFiles(c, state)]
}
