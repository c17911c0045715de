/**
 * `span finetune squad` as a TaskAdapter of the one fine-tuning loop (train/finetune-loop.ts):
 * run_squad's training windows (BERT §4.2; SpanBERT appendix B), its loss, and dev scoring with
 * the official scorer. SQuAD 2.0 is scored as SpanBERT's run_squad does: the best non-null span
 * of every question with its null odds, evaluate-v2.0's find_all_best_thresh, the checkpoint kept
 * by best_f1 and its best_f1_thresh stored for `predict squad` (--eval-metric chooses).
 */
import {writeFile} from 'node:fs/promises'
import {evaluateV1, evaluateV2, type GoldQuestion} from '../../metrics/squad.js'
import {type CheckpointFile, VOCAB_FILE} from '../../model/checkpoint.js'
import {type BertForQuestionAnswering, type QaHostBatch, qaModelFiles} from '../../model/qa.js'
import {errorIn, SpanError} from '../../util/errors.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import {type FinetuneSettings, configFiles, vocabBytes} from '../../train/finetune-config.js'
import type {SquadDataset, SquadExample, SquadVersion} from './dataset.js'
import type {WindowOptions} from './features.js'
import {SquadFeaturizer} from './featurizer.js'
import {collateWindows, predictSquad} from './predict.js'

/** The metrics that can choose SQuAD's best checkpoint (--eval-metric). */
export const SQUAD_EVAL_METRICS = ['f1', 'exact', 'best_f1', 'best_exact'] as const

/** The resolved settings of a run, saved as finetune_config.json beside the model. */
export interface SquadFinetuneConfig extends FinetuneSettings {
  task: 'squad'
  version: SquadVersion
  'doc-stride': number
  'max-query-len': number
  'n-best': number
  'max-answer-len': number
  'null-threshold': number
  /** the dev metric that decides the best checkpoint; null: best_f1 for v2.0, f1 for v1.1 */
  'eval-metric'?: string | null
}

/** A training window, compact: its ids, where the passage starts, and its labels (0 = [CLS]). */
export interface TrainWindow {
  ids: Int32Array
  docOffset: number
  start: number
  end: number
}

export function windowOptions(c: SquadFinetuneConfig): WindowOptions {
  return {maxLen: c['max-len'], docStride: c['doc-stride'], maxQueryLen: c['max-query-len']}
}

/** The metric that keeps the best checkpoint: --eval-metric, else best_f1 (v2.0) or f1 (v1.1). */
export function squadEvalMetric(c: SquadFinetuneConfig): string {
  const m = c['eval-metric'] ?? (c.version === '2.0' ? 'best_f1' : 'f1')
  if (m.startsWith('best_') && c.version !== '2.0') throw new SpanError(`--eval-metric ${m} is for SQuAD v2.0 (it tunes the null threshold)`)
  return m
}

/**
 * The training windows of every question (convert_examples_to_features with is_training):
 * questions whose answer text is not found in the passage's words are skipped, as run_squad does.
 */
export function buildTrainWindows(data: SquadDataset, version: SquadVersion, tokenizer: WordPieceTokenizer, w: WindowOptions): {windows: TrainWindow[]; skipped: number} {
  const fz = new SquadFeaturizer(tokenizer, w)
  const windows: TrainWindow[] = []
  let skipped = 0
  data.examples.forEach((ex, i) => {
    if (version === '1.1') checkV1Trainable(ex, data.source)
    const r = fz.features(ex, i, true)
    if (r.answerNotFound) skipped++
    for (const f of r.features) windows.push({ids: Int32Array.from(f.ids), docOffset: f.docOffset, start: f.start, end: f.end})
  })
  if (windows.length === 0) throw errorIn(data.source, `no question could be used for training (no answer found in its passage)`)
  return {windows, skipped}
}

/** run_squad: "For training, each question should have exactly 1 answer" (v1.1). */
function checkV1Trainable(ex: SquadExample, source: string): void {
  if (ex.answers.length === 0 || ex.isImpossible) {
    throw errorIn(source, `question ${ex.id} has no answer, which SQuAD v1.1 training cannot use (a v2.0 dataset? use --version 2.0)`)
  }
}

/** What the adapter needs; the caller owns (and disposes) the model. */
export interface SquadRun {
  config: SquadFinetuneConfig
  model: BertForQuestionAnswering
  tokenizer: WordPieceTokenizer
  vocabPath: string
  train: SquadDataset
  dev: SquadDataset | null
}

/** The SQuAD task for the fine-tuning loop (see train/adapter.ts). */
export function squadAdapter(run: SquadRun, log: (line: string) => void): TaskAdapter<TrainWindow, QaHostBatch> {
  const c = run.config
  const {windows, skipped} = buildTrainWindows(run.train, c.version, run.tokenizer, windowOptions(c))
  log(`${run.train.examples.length} questions, ${windows.length} windows${skipped ? ` (${skipped} questions skipped: answer not found in the passage)` : ''}`)
  const pad = run.tokenizer.vocab.special.pad
  return {
    task: 'squad', params: run.model.params, config: run.model.config, units: windows,
    tokens: (w) => w.ids.length,
    collate: (ws) => collateWindows(ws, pad, true),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate: async () => (run.dev ? devScores(run) : null),
    metric: squadEvalMetric(c), higherIsBetter: true,
    files: (state) => squadCheckpointFiles(run, state),
  }
}

/**
 * Exact match and F1 of the dev set (the official scorer's numbers, 0–100). v2.0: every
 * question's best non-null span with its null odds (score_null − best span score), scored
 * with the odds as na-probs (evaluate-v2.0 --na-prob-file, --na-prob-thresh = --null-threshold),
 * which adds best_exact, best_f1 and their thresholds.
 */
export async function devScores(run: SquadRun): Promise<DevScores> {
  const c = run.config
  const dev = run.dev as SquadDataset
  const v2 = c.version === '2.0'
  const preds = await predictSquad(run.model, run.tokenizer, dev.examples, {
    windows: windowOptions(c), batchSize: c['batch-size'],
    decode: {nBest: c['n-best'], maxAnswerLen: c['max-answer-len'], v2, nullThreshold: v2 ? Infinity : c['null-threshold']},
  })
  const predictions = new Map(preds.map((p) => [p.qid, p.text]))
  const gold: GoldQuestion[] = dev.examples.map((ex) => ({id: ex.id, answers: ex.answers.map((a) => a.text)}))
  if (v2) {
    const naProbs = new Map(preds.map((p) => [p.qid, p.nullOdds ?? 0]))
    return realizableThresholds(evaluateV2(gold, predictions, {naProbs, naProbThresh: c['null-threshold']}), gold, predictions, naProbs)
  }
  const r = evaluateV1(gold.filter((q) => q.answers.length > 0), predictions)
  return {exact: r.exact_match, f1: r.f1}
}

/**
 * evaluate-v2.0's find_best_thresh starts from "no answer anywhere" with threshold 0.0, which
 * with null odds (not probabilities in [0, 1]) does not mean "no answer anywhere"; when no
 * threshold beats that start, the reported one would not give best_f1 (best_exact) when applied.
 * Then the stored threshold is one below every question's odds, which does; otherwise the
 * official threshold is kept. Checked by applying it as predict squad does.
 */
function realizableThresholds(r: DevScores, gold: GoldQuestion[], preds: Map<string, string>, odds: Map<string, number>): DevScores {
  const out = {...r}
  const below = [...odds.values()].reduce((a, b) => Math.min(a, b), Infinity) - 1 // not Math.min(...): any number of questions
  for (const [best, key] of [['best_f1', 'f1'], ['best_exact', 'exact']] as const) {
    const t = r[`${best}_thresh`]
    const applied = new Map([...preds].map(([q, text]) => [q, (odds.get(q) ?? 0) > t ? '' : text]))
    if (Math.abs(evaluateV2(gold, applied)[key] - r[best]) > 1e-9) out[`${best}_thresh`] = below
  }
  return out
}

/** config.json + model.safetensors + vocab.txt + tokenizer_config.json + finetune_config.json (with state). */
export async function squadCheckpointFiles(run: SquadRun, state: Record<string, unknown>): Promise<CheckpointFile[]> {
  return [
    ...(await qaModelFiles(run.model)),
    {name: VOCAB_FILE, write: (p: string) => writeFile(p, vocabBytes(run.vocabPath))},
    ...configFiles(run.config, state),
  ]
}
