#!/usr/bin/env node
/**
 * Does `span finetune coref` learn? LitBank fold 0 (../shared/data/coref/litbank: 80 train, 10 dev,
 * 10 test documents), or OntoGUM (BENCH_DATA=ontogum: GUM's train/dev/test). Printed: the
 * string-match baseline (bench/coref-baseline.mjs) on dev and test, then a run of `finetune coref`
 * (train → dev, best/ by dev CoNLL F1), `predict coref` of dev and test with best/, each scored; with
 * the settings, steps and seconds. Scores come from `span eval coref --json` (the official scorer's
 * numbers; finetune's dev scores are the same function, src/core/tasks/coref/score.ts).
 * Work files go to bench/out/coref-learning-DATA/. Not a test. Measured 2026-11-26 on a shared 2-core
 * machine (load 15-19), BENCH_EPOCHS=5: 400 steps in 1,003 s, 19 minutes in all; LitBank fold 0 dev
 * CoNLL F1 41.45 (baseline 35.21), test 39.40 (baseline 34.79), still rising at the last epoch.
 * OntoGUM, BENCH_EPOCHS=4: 708 steps in 972 s; dev 32.89 (baseline 35.11), test 30.22 (33.95): a
 * scratch tiny encoder stays below string match there after 4 epochs.
 * Second session (after the padding-antecedent fix and OntoGUM's punctuation sentences; load 12-19,
 * BENCH_THREADS=1): OntoGUM 4 epochs, 708 steps in 1,576 s: dev 33.11, test 31.61; then
 * BENCH_INIT=that best/ BENCH_LR=5e-4 BENCH_TASK_LR=5e-4: best dev 36.44 after its first epoch, test
 * 33.78 (baseline 35.11 / 33.95); BENCH_INIT=that best/ BENCH_LR=3e-4 BENCH_TASK_LR=3e-4 (4 epochs,
 * 631 s): dev 35.94, test 34.43; BENCH_INIT=the LitBank run's best/ (4 epochs): dev 33.81. LitBank BENCH_EPOCHS=2: 160 steps, Joshi head dev 34.11 in 391 s;
 * BENCH_HEAD=s2e dev 25.64 in 147 s, BENCH_EPOCHS=8 (640 steps, 402 s) dev 31.79.
 *
 *   npm run build && node bench/coref-learning.mjs
 * Settings (env): BENCH_DATA (litbank | ontogum), BENCH_PRESET (tiny), BENCH_INIT (a checkpoint instead of
 * the preset), BENCH_EPOCHS (4), BENCH_LR (1e-3), BENCH_TASK_LR (1e-3), BENCH_SEG (128, --max-segment-len),
 * BENCH_FFNN (150), BENCH_DEPTH (1), BENCH_MAX_TRAIN (documents; default all), BENCH_SEED (1), BENCH_THREADS (2),
 * BENCH_MENTION_LOSS (--mention-loss; default the command's), BENCH_HEAD (--head), BENCH_TAG (a suffix of the work folder),
 * BENCH_TEST (0: predict and score dev only, to choose settings without looking at test).
 */
import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {stringMatchClusters} from './coref-baseline.mjs'
import {spanSync} from './lib/span.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DATA = join(ROOT, '..', 'shared', 'data', 'coref')
const env = (k, d) => process.env[k] ?? d
const S = {
  data: env('BENCH_DATA', 'litbank'),
  preset: env('BENCH_PRESET', 'tiny'),
  init: env('BENCH_INIT', ''),
  epochs: env('BENCH_EPOCHS', '4'),
  lr: env('BENCH_LR', '1e-3'),
  taskLr: env('BENCH_TASK_LR', '1e-3'),
  seg: env('BENCH_SEG', '128'),
  ffnn: env('BENCH_FFNN', '150'),
  depth: env('BENCH_DEPTH', '1'),
  maxTrain: env('BENCH_MAX_TRAIN', ''),
  seed: env('BENCH_SEED', '1'),
  threads: env('BENCH_THREADS', '2'),
  mentionLoss: env('BENCH_MENTION_LOSS', ''),
  head: env('BENCH_HEAD', ''),
  tag: env('BENCH_TAG', ''),
  test: env('BENCH_TEST', '1'),
}
const OUT = join(ROOT, 'bench', 'out', `coref-learning-${S.data}${S.tag ? `-${S.tag}` : ''}`)
const split = (name) =>
  S.data === 'ontogum' ? {path: join(DATA, 'ontogum', 'conll'), split: name} : {path: join(DATA, 'litbank', 'tenfold_splits', '0', `${name}.ids`)}
const dataArgs = (flag, s) => [flag, s.path, ...(s.split ? [`--${flag.slice(2)}-split`.replace('--data-split', '--split'), s.split] : [])]

const {readConll, writeConll} = await import('../dist/core/tasks/coref/conll.js')
const {corefDevScores} = await import('../dist/core/tasks/coref/score.js')
const hasEval = existsSync(join(ROOT, 'dist', 'commands', 'eval', 'coref.js'))

/** CoNLL F1 and its parts of a prediction file against a split. */
function score(s, predFile) {
  if (hasEval) {
    const j = JSON.parse(spanSync(['eval', 'coref', '--gold', s.path, ...(s.split ? ['--split', s.split] : []), '--pred', predFile, '--json']).stdout)
    return {conll_f1: j.conll_f1, muc: j.muc.f1, bcub: j.bcub.f1, ceafe: j.ceafe.f1, mentions: j.mentions.f1}
  }
  const gold = readConll(s.path, s.split ? {split: s.split} : {})
  const pred = new Map()
  for (const d of readConll(predFile)) pred.set(d.key, d.clusters)
  const r = corefDevScores(
    gold,
    gold.map((d) => pred.get(d.key) ?? []),
  )
  return {conll_f1: r.conll_f1, muc: r.muc_f1, bcub: r.bcub_f1, ceafe: r.ceafe_f1, mentions: r.mention_f1}
}
const line = (name, r) =>
  console.log(
    `${name.padEnd(28)} CoNLL F1 ${r.conll_f1.toFixed(2)}  (MUC ${r.muc.toFixed(2)}, B3 ${r.bcub.toFixed(2)}, CEAFe ${r.ceafe.toFixed(2)}; mentions ${r.mentions.toFixed(2)})`,
  )

rmSync(OUT, {recursive: true, force: true})
mkdirSync(OUT, {recursive: true})
console.log(`coref-learning: ${JSON.stringify(S)}`)
for (const name of ['dev', 'test']) {
  const s = split(name)
  const file = join(OUT, `baseline-${name}.conll`)
  writeFileSync(
    file,
    readConll(s.path, s.split ? {split: s.split} : {})
      .map((d) => writeConll(d, stringMatchClusters(d.words)))
      .join(''),
  )
  line(`string-match baseline ${name}`, score(s, file))
}
const run = join(OUT, 'run')
const model = S.init ? ['--init', S.init] : ['--preset', S.preset]
const args = [
  'finetune',
  'coref',
  ...model,
  ...dataArgs('--train', split('train')),
  ...dataArgs('--dev', split('dev')),
  '--out',
  run,
  '--epochs',
  S.epochs,
  '--lr',
  S.lr,
  '--task-lr',
  S.taskLr,
  '--max-segment-len',
  S.seg,
  '--ffnn-size',
  S.ffnn,
  '--coref-depth',
  S.depth,
  '--seed',
  S.seed,
  '--threads',
  S.threads,
  '--log-every',
  '20',
  ...(S.maxTrain ? ['--max-train-examples', S.maxTrain] : []),
  ...(S.mentionLoss ? ['--mention-loss', S.mentionLoss] : []),
  ...(S.head ? ['--head', S.head] : []),
]
console.log(`span ${args.join(' ')}`)
const ft = spanSync(args)
const recs = ft.stdout
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l))
for (const r of recs.filter((r) => r.split === 'dev'))
  console.log(
    `  dev at step ${r.step}: CoNLL F1 ${r.conll_f1} (MUC ${r.muc_f1 ?? r.muc?.f1}, B3 ${r.bcub_f1 ?? r.bcub?.f1}, CEAFe ${r.ceafe_f1 ?? r.ceafe?.f1})${r.best ? ' best' : ''}`,
  )
const losses = recs.filter((r) => typeof r.loss === 'number')
console.log(`  ${losses.at(-1)?.step} steps in ${ft.secs.toFixed(0)} s; loss ${losses[0]?.loss.toFixed(1)} → ${losses.at(-1)?.loss.toFixed(1)}`)
for (const name of S.test === '0' ? ['dev'] : ['dev', 'test']) {
  const s = split(name)
  const file = join(OUT, `pred-${name}.conll`)
  const p = spanSync(['predict', 'coref', '--model', run, ...dataArgs('--data', s), '--threads', S.threads, '-o', file])
  line(`finetune coref ${name} (${p.secs.toFixed(0)} s)`, score(s, file))
}
