/**
 * `span finetune ner` as a TaskAdapter of the one fine-tuning loop: CoNLL-2003 sentences as
 * windows of sub-tokens with the IOB2 label on each word's first sub-token (./features.ts), a
 * token classifier (model/token-classifier.ts), dev scored by conlleval (metrics/conlleval.ts)
 * on the tags written back in the file's scheme; the best checkpoint by F1.
 */
import * as tf from '@tensorflow/tfjs'
import {copyFile, writeFile} from 'node:fs/promises'
import {conllCount, conllScores} from '../../metrics/conlleval.js'
import {join} from 'node:path'
import {VOCAB_FILE, WEIGHTS_FILE, checkLabelCount} from '../../model/checkpoint.js'
import {type HeadConfig, readConfigJson} from '../../model/classifier.js'
import {type PresetName, presetConfig} from '../../model/config.js'
import {readSafetensors} from '../../model/safetensors.js'
import {SpanError} from '../../stream/errors.js'
import {EVAL} from '../../model/layers.js'
import {BertForTokenClassification, type TokenHostBatch, tokenClassifierFiles} from '../../model/token-classifier.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import {type FinetuneSettings, configFiles, vocabBytes} from '../../train/finetune-config.js'
import {SPAN_FT_DICT_FILE, shuffleSpans, spanIndex} from '../../model/span-index.js'
import {Rng} from '../../util/rng.js'
import type {SpanFtConfig} from '../../model/span-ft.js'
import {type NgramDict, WordSplitter} from '../../text/ngrams.js'
import {type NerFeature, nerFeatures} from './features.js'
import {type ConllFile, type TagScheme, goldRows, inScheme, toIob2} from './read.js'
import {maxOf} from '../../util/arrays.js'

export interface NerFinetuneConfig extends FinetuneSettings {
  task: 'ner'
  /** the training file's scheme (predictions are written in it) */
  scheme: TagScheme
  stride: number
  /** where the tags came from: --tag-column (ner, chunk, pos, last or a number) and --tag-types (null: every type); tag-column.ts */
  'tag-column'?: string
  'tag-types'?: string | null
  /** IOB2 labels in class order */
  labels: string[]
  /** Span Fine-tuning's token-level variant (Bao et al. §5.4): the dictionary, r and l */
  'span-ft'?: boolean
  dict?: string | null
  'max-spans'?: number
  'max-span-tokens'?: number
  /** 'random': run_ner.py's --do_random (randomSegmentation below) */
  segmentation?: 'dict' | 'random'
}

/** What segments the sentences for Span Fine-tuning: the dictionary and r. */
export interface NerSpanSource {
  dict: NgramDict
  r: number
}

/** Windows of every sentence; with labels when the file has tags. */
export function nerUnits(
  file: ConllFile,
  labels: string[],
  tok: WordPieceTokenizer,
  maxLen: number,
  stride: number,
  sf: NerSpanSource | null = null,
): NerFeature[] {
  const index = new Map(labels.map((l, i) => [l, i]))
  const split = new WordSplitter()
  return file.sentences.flatMap((s, k) => {
    const y = s.tags ? toIob2(s.tags).map((t) => index.get(t) ?? 0) : null
    // the reference segments the sentence's lowercased words (dense_sent_tokenization.py MultiTokenizer.tokenize)
    const seg = sf ? {segments: sf.dict.segmentAsReference(s.words.map((w) => split.normalise(w))), r: sf.r} : null
    return nerFeatures(s.words, y, k, tok, maxLen, stride, seg)
  })
}

/** The span_ft of a token classifier's config.json (the reference's NER_CNN: padding 1, t ◇ span). */
export function nerSpanFt(r: number, l: number, segmentation: 'dict' | 'random' = 'dict'): SpanFtConfig {
  return {max_spans: r, max_span_tokens: l, padding: 1, pool: 'reference', cls: 'raw', segmentation, level: 'token'}
}

/**
 * run_ner.py's --do_random (BAORONGZHOU/span-fine-tuning @bca4358, do_random_chunk): the span
 * lengths of every window shuffled and laid again from [CLS], for the training, dev and test
 * features alike (unlike run_classifier_direct.py, which shuffles the training features only).
 * Train, then dev (the reference's order) draw from one stream seeded with --seed.
 */
export function randomSegmentation(seed: number, train: NerFeature[], dev: NerFeature[] | null = null): [NerFeature[], NerFeature[] | null] {
  const rng = new Rng(seed)
  return [shuffleSpans(train, rng), dev && shuffleSpans(dev, rng)]
}

/** r and l of a token classifier's span CNN, or null without one. */
export function nerSpanLimits(model: BertForTokenClassification): {r: number; l: number} | null {
  const sf = model.head.span_ft
  return sf ? {r: sf.max_spans, l: sf.max_span_tokens} : null
}

export function collateNer(fs: NerFeature[], padId: number, withLabels: boolean, spans: {r: number; l: number} | null = null): TokenHostBatch {
  const B = fs.length
  const T = maxOf(fs.map((f) => f.ids.length))
  const b: TokenHostBatch = {
    B,
    T,
    ids: new Int32Array(B * T).fill(padId),
    segments: new Int32Array(B * T),
    mask: new Float32Array(B * T),
    labels: withLabels ? new Int32Array(B * T).fill(-1) : null,
    spans: spans
      ? spanIndex(
          fs.map((f) => f.spans),
          T,
          spans.r,
          spans.l,
          true,
        )
      : null,
  }
  fs.forEach((f, i) => {
    b.ids.set(f.ids, i * T)
    b.mask.fill(1, i * T, i * T + f.ids.length)
    if (b.labels) b.labels.set(f.labels, i * T)
  })
  return b
}

/** The predicted tags of every sentence, in the given scheme. */
export async function predictTags(
  model: BertForTokenClassification,
  file: ConllFile,
  units: NerFeature[],
  labels: string[],
  scheme: TagScheme,
  batchSize: number,
  padId: number,
): Promise<string[][]> {
  const iob2 = await predictWordTags(
    model,
    file.sentences.map((s) => s.words.length),
    units,
    labels,
    batchSize,
    padId,
  )
  return iob2.map((tags) => inScheme(tags, scheme))
}

/** Each word's predicted IOB2 tag, read at its first sub-token in the window where it has the most context; `words[k]`: sentence k's word count. */
export async function predictWordTags(
  model: BertForTokenClassification,
  words: number[],
  units: NerFeature[],
  labels: string[],
  batchSize: number,
  padId: number,
): Promise<string[][]> {
  const iob2 = words.map((n) => new Array<string>(n).fill('O'))
  for (let at = 0; at < units.length; at += batchSize) {
    const fs = units.slice(at, at + batchSize)
    const b = collateNer(fs, padId, false, nerSpanLimits(model))
    const y = tf.tidy(() => model.forward(b, EVAL).argMax(1)) // [B·T]
    const best = await y.data()
    y.dispose()
    fs.forEach((f, i) => f.words.forEach((w, t) => w >= 0 && (iob2[f.sentence][w] = labels[best[i * b.T + t]])))
  }
  return iob2
}

/** conlleval's rows (token GOLD PRED) of a gold file, GOLD from its tag column, with predicted tags (O on -DOCSTART-). */
export function rowsWithPredictions(file: ConllFile, tags: string[][]): string[][] {
  const pred = new Map<number, string>()
  file.sentences.forEach((s, k) => s.lines.forEach((li, w) => pred.set(li, tags[k][w])))
  return goldRows(file, (i) => pred.get(i))
}

export interface NerRun {
  config: NerFinetuneConfig
  model: BertForTokenClassification
  tokenizer: WordPieceTokenizer
  vocabPath: string
  dev: ConllFile | null
}

export function nerAdapter(run: NerRun, train: NerFeature[], dev: NerFeature[] | null): TaskAdapter<NerFeature, TokenHostBatch> {
  const c = run.config
  const pad = run.tokenizer.vocab.special.pad
  const evaluate = async (): Promise<DevScores | null> => {
    if (!run.dev || !dev) return null
    const tags = await predictTags(run.model, run.dev, dev, c.labels, c.scheme, c['batch-size'], pad)
    const s = conllScores(conllCount(rowsWithPredictions(run.dev, tags)))
    return {precision: s.precision, recall: s.recall, f1: s.f1, accuracy: s.accuracy}
  }
  return {
    task: 'ner',
    params: run.model.params,
    config: run.model.config,
    units: train,
    tokens: (u) => u.ids.length,
    collate: (us) => collateNer(us, pad, true, nerSpanLimits(run.model)),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate,
    metric: 'f1',
    higherIsBetter: true,
    files: async (state) => [
      ...(await tokenClassifierFiles(run.model)),
      {name: VOCAB_FILE, write: (p: string) => writeFile(p, vocabBytes(run.vocabPath))}, // from memory: a resumed run's vocab.txt sits in a checkpoint that rotation removes
      ...configFiles(c, state),
      ...(c.dict ? [{name: SPAN_FT_DICT_FILE, write: (p: string) => copyFile(c.dict as string, p)}] : []),
    ],
  }
}

/** The token classifier to fine-tune or to predict with: a checkpoint's (encoder and, when it fits, head), else a fresh --preset one. */
export async function nerModel(
  dir: string | null,
  preset: string | undefined,
  head: HeadConfig,
  vocabSize: number,
  maxLen: number,
  seed: number,
  log: (l: string) => void,
  strict = false, // predict: every parameter there with its shape
): Promise<BertForTokenClassification> {
  if (!dir) return BertForTokenClassification.init(presetConfig(preset as PresetName, vocabSize, {max_position_embeddings: Math.max(512, maxLen)}), head, seed)
  const {config, json} = await readConfigJson(dir)
  if (maxLen > config.max_position_embeddings)
    throw new SpanError(`--max-len ${maxLen} exceeds ${dir}'s ${config.max_position_embeddings} positions (max_position_embeddings)`)
  if (vocabSize > config.vocab_size) throw new SpanError(`the vocabulary has ${vocabSize} entries, ${dir} only ${config.vocab_size} (vocab_size)`)
  const file = await readSafetensors(join(dir, WEIGHTS_FILE))
  if (strict) checkLabelCount(json, file.tensors, join(dir, WEIGHTS_FILE))
  const {model, initialised} = BertForTokenClassification.fromTensors(config, head, file.tensors, dir, seed, strict)
  if (initialised.length) log(`initialised ${initialised.join(', ')}`)
  return model
}
