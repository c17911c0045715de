#!/usr/bin/env node
/**
 * Does `span finetune mrqa` learn to read? MRQA's SQuAD dev set (../shared/data/mrqa/SQuAD.jsonl.gz,
 * 2,067 contexts) split by context: the first 1,800 for training (9,324 questions), the next 67 for
 * choosing the checkpoint (--dev, 335), the last 200 held out (848). Printed at the end, on the
 * held-out contexts, through `span eval mrqa` (the official scorer's numbers):
 *   1. trivial baselines: no answer, and the first k words of the context with k chosen on the
 *      training contexts (best EM and best F1 each), beside the best k on the held-out set itself;
 *   2. runs of `finetune mrqa` → `predict mrqa` → `eval mrqa`, one per BENCH_RUNS entry:
 *      scratch: a random model of BENCH_PRESET;
 *      init: from the checkpoint BENCH_INIT (span, Hugging Face or SpanBERT's pytorch_model.bin
 *        with BENCH_VOCAB; BENCH_CASED=0 for an uncased one): the check a pre-trained encoder makes;
 *      self: from a model `span pretrain`-ed (MLM + SBO, BENCH_PT_STEPS steps) on the training
 *        split's own text, its contexts and questions without answers (Krishna et al. 2022,
 *        "Downstream Datasets Make Surprisingly Good Pretraining Corpora").
 * Work files go to bench/out/mrqa-learning/. Not a test: a scratch run takes about 12 minutes on
 * 2 cores, self-pre-training about 30 minutes per 1,500 steps.
 *
 *   npm run build && node bench/mrqa-learning.mjs
 *   BENCH_RUNS=scratch,init BENCH_INIT=spanbert-base-cased BENCH_VOCAB=vocab.txt node bench/mrqa-learning.mjs
 * Settings (env): BENCH_RUNS (scratch, or scratch,init when BENCH_INIT is set), BENCH_PRESET (tiny),
 * BENCH_MAX_LEN (256), BENCH_STRIDE (128), BENCH_EPOCHS (2), BENCH_LR (1e-3; 2e-5 suits a pre-trained
 * base model), BENCH_BATCH (32), BENCH_SEED (1), BENCH_MAX_TRAIN (windows trained on; default all),
 * BENCH_PT_STEPS (1500), BENCH_PT_BATCH (16), BENCH_PT_LR (1e-3).
 */
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {gunzipSync} from 'node:zlib'
import {spanSync} from './lib/span.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DATA = join(ROOT, '..', 'shared', 'data')
const OUT = join(ROOT, 'bench', 'out', 'mrqa-learning')
const VOCAB = join(DATA, 'vocab', 'bert-base-cased.txt')
const env = (k, d) => process.env[k] ?? d
const S = {
  runs: env('BENCH_RUNS', process.env.BENCH_INIT ? 'scratch,init' : 'scratch')
    .split(',')
    .filter(Boolean),
  preset: env('BENCH_PRESET', 'tiny'),
  init: env('BENCH_INIT', ''),
  vocab: env('BENCH_VOCAB', ''),
  cased: env('BENCH_CASED', '1') !== '0',
  maxLen: env('BENCH_MAX_LEN', '256'),
  stride: env('BENCH_STRIDE', '128'),
  epochs: env('BENCH_EPOCHS', '2'),
  lr: env('BENCH_LR', '1e-3'),
  batch: env('BENCH_BATCH', '32'),
  seed: env('BENCH_SEED', '1'),
  maxTrain: env('BENCH_MAX_TRAIN', ''),
  ptSteps: env('BENCH_PT_STEPS', '1500'),
  ptBatch: env('BENCH_PT_BATCH', '16'),
  ptLr: env('BENCH_PT_LR', '1e-3'),
}

/** The three splits as MRQA files (header line kept); returns their paths and context records. */
function split() {
  const [header, ...contexts] = gunzipSync(readFileSync(join(DATA, 'mrqa', 'SQuAD.jsonl.gz')))
    .toString('utf8')
    .trimEnd()
    .split('\n')
  const parts = {train: contexts.slice(0, 1800), val: contexts.slice(1800, 1867), test: contexts.slice(1867)}
  const out = {}
  for (const [name, lines] of Object.entries(parts)) {
    const path = join(OUT, `${name}.jsonl`)
    writeFileSync(path, [header, ...lines].join('\n') + '\n')
    const records = lines.map((l) => JSON.parse(l))
    out[name] = {path, records, questions: records.reduce((n, r) => n + r.qas.length, 0)}
  }
  return out
}

/** The words of a context without MRQA's [PAR]/[TLE]/[DOC]/[SEP] markers. */
const words = (context) =>
  context
    .replace(/\[(PAR|TLE|DOC|SEP)\]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)

/** {exact_match, f1} of a {qid: text} prediction through `span eval mrqa --json`. */
function score(part, preds, name) {
  const pred = join(OUT, `${name}.pred.json`)
  writeFileSync(pred, JSON.stringify(preds))
  return JSON.parse(spanSync(['eval', 'mrqa', '--data', part.path, '--pred', pred, '--json']).stdout)
}

/** First-k-words predictions of every question of a split. */
function firstK(part, k) {
  const preds = {}
  for (const r of part.records) for (const q of r.qas) preds[q.qid] = words(r.context).slice(0, k).join(' ')
  return preds
}

/** The trivial baselines on the held-out split; k of first-k chosen on train (and, apart, on test). */
function baselines(parts) {
  const ks = [1, 2, 3, 4, 5, 8, 10, 15, 20, 25, 30, 40, 60]
  const onTrain = ks.map((k) => ({k, ...score(parts.train, firstK(parts.train, k), `train-first${k}`)}))
  const onTest = ks.map((k) => ({k, ...score(parts.test, firstK(parts.test, k), `test-first${k}`)}))
  const best = (rows, m) => rows.reduce((a, b) => (b[m] > a[m] ? b : a))
  const pick = (m) => onTest.find((r) => r.k === best(onTrain, m).k)
  return {
    empty: score(parts.test, {}, 'test-empty'),
    emK: pick('exact_match'),
    f1K: pick('f1'),
    oracleEm: best(onTest, 'exact_match'),
    oracleF1: best(onTest, 'f1'),
  }
}

/** Self-pre-training data: each training context followed by its questions, one document each. */
function pretrainText(parts) {
  const clean = (s) =>
    s
      .replace(/\[(PAR|TLE|DOC|SEP)\]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  const docs = parts.train.records.map((r) => [clean(r.context), ...r.qas.map((q) => clean(q.question))].join('\n'))
  const path = join(OUT, 'pretrain.txt')
  writeFileSync(path, docs.join('\n\n') + '\n')
  return path
}

/** span tokenize | span block --len 384 | span pretrain on the training split's text. */
function pretrain(parts) {
  const tokens = join(OUT, 'pretrain.tokens.ndjson')
  const blocks = join(OUT, 'pretrain.blocks.ndjson')
  spanSync(['tokenize', '--vocab', VOCAB, '--cased', pretrainText(parts)], {stdoutFile: tokens})
  spanSync(['block', '--len', '384', tokens], {stdoutFile: blocks})
  const dir = join(OUT, 'pretrain')
  rmSync(dir, {recursive: true, force: true})
  const r = spanSync([
    'pretrain',
    blocks,
    '--preset',
    S.preset,
    '--vocab',
    VOCAB,
    '--max-steps',
    S.ptSteps,
    '--warmup',
    '100',
    '--lr',
    S.ptLr,
    '--batch-size',
    S.ptBatch,
    '--seed',
    S.seed,
    '--log-every',
    '50',
    '--save-every',
    S.ptSteps,
    '--keep',
    '1',
    '--out',
    dir,
  ])
  const last = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((m) => m.loss !== undefined)
    .at(-1)
  return {dir: join(dir, `checkpoint-${S.ptSteps}`), secs: r.secs, last}
}

/** finetune mrqa (checkpoint chosen on val) → predict mrqa on test → eval mrqa. */
function finetune(parts, name, init) {
  const out = join(OUT, `ft-${name}`)
  rmSync(out, {recursive: true, force: true})
  const from = init ? ['--init', init, ...(S.vocab ? ['--vocab', S.vocab] : [])] : ['--preset', S.preset, '--vocab', VOCAB]
  const data = ['--train', parts.train.path, '--dev', parts.val.path, '--out', out, S.cased ? '--cased' : '--uncased']
  const opts = ['--max-len', S.maxLen, '--doc-stride', S.stride, '--epochs', S.epochs, '--lr', S.lr, '--batch-size', S.batch, '--seed', S.seed]
  const ft = spanSync(['finetune', 'mrqa', ...from, ...data, ...opts, ...(S.maxTrain ? ['--max-train-examples', S.maxTrain] : [])])
  const predDir = join(OUT, `${name}-test-pred`)
  rmSync(predDir, {recursive: true, force: true})
  const pr = spanSync(['predict', 'mrqa', '--model', join(out, 'best'), '--data', parts.test.path, '-o', predDir])
  const pred = join(predDir, 'predictions.json')
  const test = JSON.parse(spanSync(['eval', 'mrqa', '--data', parts.test.path, '--pred', pred, '--json']).stdout)
  return {name, test, ftSecs: ft.secs, predSecs: pr.secs}
}

/** The checkpoint a run starts from: none (scratch), BENCH_INIT, or self-pre-training's. */
function initOf(name, parts) {
  if (name === 'scratch') return {dir: null, pt: null}
  if (name === 'init') {
    if (!S.init) throw new Error('BENCH_RUNS has init but BENCH_INIT names no checkpoint')
    return {dir: S.init, pt: null}
  }
  if (name === 'self') {
    const pt = pretrain(parts)
    return {dir: pt.dir, pt}
  }
  throw new Error(`unknown run ${name}; have scratch, init, self`)
}

mkdirSync(OUT, {recursive: true})
const parts = split()
console.log(`MRQA SQuAD split by context: train ${parts.train.questions} questions, val ${parts.val.questions}, test ${parts.test.questions}`)
const base = baselines(parts)
const runs = []
let pt = null
for (const name of S.runs) {
  const init = initOf(name, parts)
  pt ??= init.pt
  runs.push(finetune(parts, name, init.dir))
  console.log(`${name}: test EM ${runs.at(-1).test.exact_match.toFixed(2)} F1 ${runs.at(-1).test.f1.toFixed(2)}`)
}

const row = (what, r, note = '') => console.log(`| ${what} | ${r.exact_match.toFixed(2)} | ${r.f1.toFixed(2)} | ${note} |`)
console.log(`\nSettings: ${JSON.stringify(S)}`)
console.log(`| held-out (${parts.test.questions} questions) | EM | F1 | |\n|---|---|---|---|`)
row('no answer (no prediction)', base.empty)
row(`first ${base.emK.k} words (best EM k on train)`, base.emK)
row(`first ${base.f1K.k} words (best F1 k on train)`, base.f1K)
row(`first ${base.oracleEm.k} words (best EM k on test itself)`, base.oracleEm)
row(`first ${base.oracleF1.k} words (best F1 k on test itself)`, base.oracleF1)
if (pt)
  console.log(
    `self-pre-training: ${pt.secs.toFixed(0)} s${pt.last ? `, last loss ${pt.last.loss.toFixed(3)} (MLM acc ${pt.last.mlm_acc.toFixed(3)}, SBO acc ${pt.last.sbo_acc.toFixed(3)})` : ` (${pt.dir})`}`,
  )
for (const r of runs) row(`finetune mrqa, ${r.name}`, r.test, `fine-tune ${r.ftSecs.toFixed(0)} s, predict ${r.predSecs.toFixed(0)} s`)
