/**
 * `span finetune coref` as a TaskAdapter of the one fine-tuning loop: the training units are whole
 * documents (./segments.ts); each step trains on a random run of max_training_segments of a
 * document's segments (truncate_example, drawn from the loop's seeded generator, so --resume is
 * exact); dev documents are predicted whole and scored by the official scorer's rules
 * (`scorer`); the best checkpoint by CoNLL F1. The head trains at --task-lr, the encoder at --lr.
 */
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {VOCAB_FILE} from '../../model/checkpoint.js'
import {readConfigJson} from '../../model/classifier.js'
import {type PresetName, presetConfig} from '../../model/config.js'
import type {ForwardContext} from '../../model/layers.js'
import {SpanError} from '../../stream/errors.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import {type FinetuneSettings, configFiles, vocabBytes} from '../../train/finetune-config.js'
import {readWeights} from '../../model/weights.js'
import type * as tf from '@tensorflow/tfjs'
import type {ConllDoc, Mention} from './conll.js'
import type {CorefHeadConfig} from './config.js'
import {isHeadParam} from './head.js'
import {CorefModel, corefFiles} from './model.js'
import {type CorefDoc, type CorefText, featurise} from './segments.js'
import {windowOf} from './spans.js'

export interface CorefFinetuneConfig extends FinetuneSettings {
  task: 'coref'
  'task-lr': number
  head: CorefHeadConfig
}

/** Scores predicted clusters (per document, in the gold's order) against the gold documents. */
export type CorefScorer = (gold: ConllDoc[], predicted: Mention[][][]) => DevScores

/** Every document featurised with the run's settings. */
export function corefUnits(docs: CorefText[], tok: WordPieceTokenizer, h: CorefHeadConfig): CorefDoc[] {
  return docs.map((d) => featurise(d, tok, h.max_segment_len, h.genres))
}

/**
 * The training documents that have words: a document of none (`#begin` straight to `#end`) has no
 * span to learn from and no segment to encode, so it is left out, said once on `log`. (Dev and
 * predict keep it: its prediction is empty, and the scorer counts it as it counts any document.)
 */
export function trainingUnits(units: CorefDoc[], log: (line: string) => void): CorefDoc[] {
  const empty = units.filter((u) => u.wordOf.length === 0)
  if (empty.length > 0)
    log(`${empty.length} training document${empty.length === 1 ? '' : 's'} without words left out (${empty[0].key}${empty.length > 1 ? ', …' : ''})`)
  return empty.length > 0 ? units.filter((u) => u.wordOf.length > 0) : units
}

/** A document's training loss: a random run of max_training_segments segments when it has more (truncate_example). */
export function trainingLoss(model: CorefModel, d: CorefDoc, ctx: ForwardContext): tf.Scalar {
  const m = model.head.max_training_segments
  if (d.segments.length <= m) return model.loss(d, ctx)
  if (!ctx.rng) throw new Error('training needs the seeded generator')
  return model.loss(windowOf(d, ctx.rng.int(d.segments.length - m + 1), m), ctx)
}

/** Sub-tokens a training step reads of a document: all of them, or at most a run of max_training_segments full segments. */
export function trainedTokens(d: CorefDoc, h: CorefHeadConfig): number {
  return d.segments.length <= h.max_training_segments ? d.wordOf.length : Math.min(d.wordOf.length, h.max_training_segments * (h.max_segment_len - 2))
}

/** Predicted word clusters of every document. */
export function predictAll(model: CorefModel, docs: CorefDoc[]): Mention[][][] {
  return docs.map((d) => model.predict(d))
}

export interface CorefRun {
  config: CorefFinetuneConfig
  model: CorefModel
  vocabPath: string
  dev: {gold: ConllDoc[]; units: CorefDoc[]} | null
  scorer: CorefScorer
}

export function corefAdapter(run: CorefRun, train: CorefDoc[]): TaskAdapter<CorefDoc, CorefDoc[]> {
  const c = run.config
  const scale = c['task-lr'] / c.lr
  return {
    task: 'coref',
    params: run.model.params,
    config: run.model.config,
    units: train,
    tokens: (u) => trainedTokens(u, c.head), // a step reads a run of segments, not the whole document
    collate: (us) => us,
    loss: (docs, ctx) => {
      const losses = docs.map((d) => trainingLoss(run.model, d, ctx))
      return (losses.length === 1 ? losses[0] : losses.reduce((a, b) => a.add(b)).div(docs.length)) as tf.Scalar
    },
    evaluate: async () => (run.dev ? run.scorer(run.dev.gold, predictAll(run.model, run.dev.units)) : null),
    metric: 'conll_f1',
    higherIsBetter: true,
    lrScale: (name) => (isHeadParam(name) ? scale : 1),
    files: async (state) => [
      ...(await corefFiles(run.model)),
      {name: VOCAB_FILE, write: (p: string) => writeFile(p, vocabBytes(run.vocabPath))},
      ...configFiles(c, state),
    ],
  }
}

/** The model to fine-tune or predict with: a checkpoint's encoder (and head, where its shapes fit), else a fresh --preset one. */
export async function corefModel(
  dir: string | null,
  preset: string | undefined,
  h: CorefHeadConfig,
  vocabSize: number,
  seed: number,
  log: (l: string) => void,
  strict = false,
): Promise<CorefModel> {
  if (!dir) return CorefModel.init(presetConfig(preset as PresetName, vocabSize, {max_position_embeddings: Math.max(512, h.max_segment_len)}), h, seed)
  const {config} = await readConfigJson(dir)
  if (h.max_segment_len > config.max_position_embeddings)
    throw new SpanError(`--max-segment-len ${h.max_segment_len} exceeds ${dir}'s ${config.max_position_embeddings} positions (max_position_embeddings)`, 2)
  if (vocabSize > config.vocab_size) throw new SpanError(`the vocabulary has ${vocabSize} entries, ${dir} only ${config.vocab_size} (vocab_size)`)
  const w = await readWeights(dir)
  const {model, initialised} = CorefModel.fromTensors(config, h, w.tensors, w.source, seed, strict)
  if (initialised.length) log(`initialised ${initialised.length} coreference head parameters (${initialised[0]}, …)`)
  return model
}

/** The head config a fine-tuned checkpoint saved (config.json `coref`). */
export async function savedHead(dir: string): Promise<CorefHeadConfig> {
  const {json} = await readConfigJson(dir)
  const h = json.coref as CorefHeadConfig | undefined
  if (!h || typeof h !== 'object') throw new SpanError(`${join(dir, 'config.json')}: no "coref" head (not a span finetune coref model)`)
  return h
}
