import {join} from 'node:path'
import {Masker, type MaskOptions, type MaskScheme, type MaskVocab, TAGGED_SCHEMES, maskVocab} from '../data/mask.js'
import {resolveVocab} from '../data/mask-stream.js'
import {Unigram} from '../data/unigram.js'
import {type BertConfig, type PresetName, parseObjectives, presetConfig} from '../model/config.js'
import {VOCAB_FILE, readConfig} from '../model/checkpoint.js'
import {SpanError} from '../stream/errors.js'
import {type Header, checkKind, parseHeader} from '../stream/header.js'
import type {Rec} from '../stream/ndjson.js'
import {type Vocab, loadVocab} from '../text/vocab.js'
import {type TrainConfig, tagLabelList} from './config.js'
import {type DataKind, type DataRules, checkRecord, guessKind} from './examples.js'
import {RecordIndex} from './index-file.js'
import {shownPath} from '../util/dirs.js'

/** The training data, indexed and checked against the model, with what masking it needs. */
export interface TrainData {
  index: RecordIndex
  rules: DataRules
  vocab: Vocab
  vocabPath: string // copied into every checkpoint
  maskerFor: (kind: DataKind) => Masker | null // blocks: dynamic masking
  longest: number // tokens of the longest example: the padded length of the widest batch (the memory plan's)
}

/** The model's config for a fresh run: a preset, sizes from flags over it (docs/algorithms.md#model-and-optimisation). */
export function freshModelConfig(c: TrainConfig, vocabSize: number, padId: number): BertConfig {
  const o: Partial<BertConfig> = {objectives: parseObjectives(c.objectives), pad_token_id: padId}
  if (c.layers !== null) o.num_hidden_layers = c.layers
  if (c.hidden !== null) o.hidden_size = c.hidden
  if (c.heads !== null) o.num_attention_heads = c.heads
  if (c.intermediate !== null || c.hidden !== null) o.intermediate_size = c.intermediate ?? 4 * (c.hidden as number)
  if (c['max-len'] !== null && c['max-len'] > 512) o.max_position_embeddings = c['max-len']
  return presetConfig(c.preset as PresetName, vocabSize, o)
}

/** The config of --init weights, with this run's objectives (their heads are taken or initialised). */
export async function initModelConfig(c: TrainConfig, dir: string): Promise<BertConfig> {
  return readConfig(dir, parseObjectives(c.objectives))
}

/** --dropout R: the hidden and attention dropout of this run (null: the config's own). */
export function withDropout(m: BertConfig, rate: number | null): BertConfig {
  return rate === null ? m : {...m, hidden_dropout_prob: rate, attention_probs_dropout_prob: rate}
}

/** --dropout R on a built model (fine-tuning): its layers read the config at every forward. */
export function setDropout(m: BertConfig, rate: number | null | undefined): void {
  if (rate === null || rate === undefined) return
  m.hidden_dropout_prob = rate
  m.attention_probs_dropout_prob = rate
}

/** The checkpoint's model config, which a resumed run keeps. */
export async function resumedModelConfig(c: TrainConfig, dir: string): Promise<BertConfig> {
  const cfg = await readConfig(dir)
  if (cfg.objectives.join(',') !== parseObjectives(c.objectives).join(',')) {
    throw new SpanError(`${dir}: the checkpoint trains ${cfg.objectives.join(',')}, cannot resume with --objectives ${c.objectives}`)
  }
  return cfg
}

/**
 * The vocabulary: the checkpoint's when resuming or starting from --init weights (the stream's
 * must be the same), else the stream's or --vocab.
 */
function dataVocab(header: Header | null, c: TrainConfig, ckptVocab: string | null, source: string): {vocab: Vocab; vocabPath: string} {
  if (!ckptVocab) {
    const vocab = resolveVocab(header, c.vocab ?? undefined, source)
    return {vocab, vocabPath: vocab.info.path}
  }
  const vocabPath = ckptVocab
  const vocab = loadVocab(vocabPath)
  const want = header?.vocab?.sha256
  if (want && want !== vocab.info.sha256) {
    throw new SpanError(`${source}: the stream was tokenized with another vocabulary (${header?.vocab?.path}) than the checkpoint's ${vocabPath}`)
  }
  return {vocab, vocabPath}
}

/** What every record must satisfy: the model's vocabulary and positions, --max-len, NSP labels. */
function dataRules(c: TrainConfig, kind: DataKind, model: BertConfig, vocab: Vocab): DataRules {
  const maxLen = c['max-len'] ?? model.max_position_embeddings
  if (maxLen > model.max_position_embeddings) {
    throw new SpanError(`--max-len ${maxLen} exceeds the model's ${model.max_position_embeddings} positions (max_position_embeddings)`)
  }
  if (vocab.tokens.length > model.vocab_size) {
    throw new SpanError(`the vocabulary has ${vocab.tokens.length} entries, the model only ${model.vocab_size} (vocab_size)`)
  }
  return {kind, vocabSize: model.vocab_size, maxLen, special: vocab.special, needNext: model.objectives.includes('nsp')}
}

/** The Masker's options from the run's settings: span mask's, flag for flag (the tagged ones for entity and noun-phrase). */
export function maskOptions(c: TrainConfig): MaskOptions {
  const base = {scheme: c.scheme as MaskScheme, ratio: c.ratio, p: c.p, maxSpan: c['max-span']}
  if (!TAGGED_SCHEMES.includes(base.scheme)) return base
  const tagLabels = c['tag-labels'] === null ? undefined : tagLabelList(c['tag-labels'])
  return {...base, taggedProb: c['tagged-prob'], tagLabels, fill: c.fill as MaskOptions['fill']}
}

interface Ready {
  rules: DataRules
  vocab: Vocab
  vocabPath: string
  tables: MaskVocab
  unigram: Unigram
}

/**
 * Indexes the training file in one pass, checking every record against the model (stage,
 * vocabulary, length, NSP labels) before a step is taken, and counting its tokens for the
 * unigram distribution that dynamic masking draws random replacements from (SpanBERT §3.1;
 * for masked examples the visible ids are counted, [MASK] never is).
 */
export async function prepareData(
  c: TrainConfig, modelFor: (vocab: Vocab) => BertConfig, resume: string | null, initVocab: string | null = null,
): Promise<TrainData & {model: BertConfig}> {
  let header: Header | null = null
  let ready: (Ready & {model: BertConfig}) | null = null
  let name = c.input === '-' || c.input === '' ? 'stdin' : shownPath(c.input)
  let longest = 0
  const onHeader = (rec: Rec) => {
    header = parseHeader(rec, name)
    checkKind(header, ['masked', 'blocks'], name, rec.line)
  }
  const onRecord = (rec: Rec) => {
    if (!ready) {
      const kind: DataKind = header ? (header.kind as DataKind) : guessKind(rec)
      const {vocab, vocabPath} = dataVocab(header, c, resume ? join(resume, VOCAB_FILE) : initVocab, name)
      const tables = maskVocab(vocab.tokens, vocab.special)
      const model = modelFor(vocab)
      ready = {rules: dataRules(c, kind, model, vocab), vocab, vocabPath, tables, unigram: new Unigram(tables.special), model}
    }
    const ids = checkRecord(rec, ready.rules, name)
    longest = Math.max(longest, ids.length)
    ready.unigram.add(ids)
  }
  const index = await RecordIndex.build(c.input, onRecord, onHeader)
  name = index.name
  if (!ready) {
    await index.close()
    throw new SpanError(`${name}: no training examples`)
  }
  const r: Ready & {model: BertConfig} = ready
  const maskerFor = (kind: DataKind) => (kind === 'blocks' ? new Masker(maskOptions(c), r.tables, r.unigram) : null)
  return {index, rules: r.rules, vocab: r.vocab, vocabPath: r.vocabPath, maskerFor, model: r.model, longest}
}
