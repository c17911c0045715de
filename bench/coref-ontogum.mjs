#!/usr/bin/env node
/**
 * OntoGUM coreference from a `span pretrain`-ed encoder (issue 23: "from a `span pretrain`-ed
 * checkpoint ... the dev CoNLL F1 clearly above a string-match baseline"), SpanBERT's own recipe
 * (pre-train with span masking + SBO, then fine-tune; seed spanbert §3, §4.1) at a size this machine
 * trains on one core:
 *   1. the corpus of bench/coref-corpus.mjs (OntoGUM's train split, LitBank fold 0's train documents,
 *      WikiText-2 valid + test; no OntoGUM dev or test text), `span tokenize | span block --len 128`;
 *   2. `span pretrain` (blocks masked afresh every epoch with span masking; MLM + SBO) of a `tiny`
 *      encoder: --batch-size 32, --lr 1e-3, --max-steps BENCH_PT_STEPS with 10% warm-up, stopped at
 *      BENCH_PT_STOP (--stop-at: the schedule of the longer run, cut there);
 *   3. bench/coref-learning.mjs with BENCH_DATA=ontogum and BENCH_INIT=that checkpoint: the
 *      string-match baseline, `finetune coref` (train → dev, best/ by dev CoNLL F1), `predict coref`
 *      of dev and test with best/, each scored by `span eval coref --json`.
 * Work files go to bench/out/coref-ontogum/ (the pre-training run in pretrain/). Not a test.
 *
 *   npm run build && node bench/coref-ontogum.mjs
 * Settings (env): BENCH_PT (an existing pre-training checkpoint: skips 1-2), BENCH_PT_STEPS (2400),
 * BENCH_PT_STOP (1800), BENCH_THREADS (1); the fine-tuning's are coref-learning.mjs's, with these
 * defaults here: BENCH_EPOCHS 12, BENCH_LR 3e-4, BENCH_TASK_LR 1e-3, BENCH_SEG 128, BENCH_FFNN 150.
 * Measured 2026-11-27 on the shared 2-core machine, one thread (docs/algorithms.md#coreference):
 * pre-training 1,800 steps in 30 min wall, 10 min CPU (load 10-11); fine-tuning 12 epochs (2,124
 * steps) in 584 s (load 4-6): best dev CoNLL F1 39.49 at epoch 10 (baseline 35.11), test 36.42
 * (baseline 33.95). 3 epochs gave dev 34.24, 8 epochs 38.86 (BENCH_TEST=0: dev only).
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {corpusDocs} from './coref-corpus.mjs'
import {spanSync} from './lib/span.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'bench', 'out', 'coref-ontogum')
const env = (k, d) => process.env[k] ?? d
const threads = env('BENCH_THREADS', '1')
const steps = Number(env('BENCH_PT_STEPS', '2400'))
const stop = env('BENCH_PT_STOP', '1800')

function pretrain() {
  mkdirSync(OUT, {recursive: true})
  const {gum, lit, wiki} = corpusDocs()
  const corpus = join(OUT, 'corpus.txt')
  writeFileSync(corpus, [...gum, ...lit, ...wiki].join('\n\n') + '\n')
  console.log(`corpus: ${gum.length} OntoGUM train, ${lit.length} LitBank fold-0 train, ${wiki.length} WikiText-2 articles`)
  const blocks = join(OUT, 'blocks.ndjson')
  const tok = spanSync(['tokenize', corpus])
  spanSync(['block', '--len', '128', '-o', blocks], {input: tok.stdout})
  const run = join(OUT, 'pretrain')
  const args = ['pretrain', blocks, '--preset', 'tiny', '--batch-size', '32', '--lr', '1e-3', '--max-steps', String(steps)]
  args.push(
    '--warmup',
    String(Math.round(steps / 10)),
    '--stop-at',
    stop,
    '--save-every',
    stop,
    '--log-every',
    '50',
    '--threads',
    threads,
    '--seed',
    '1',
    '--out',
    run,
  )
  console.log(`span ${args.join(' ')}`)
  const p = spanSync(args)
  const last = p.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((r) => typeof r.mlm_loss === 'number')
    .at(-1)
  console.log(
    `  ${last.step} steps in ${p.secs.toFixed(0)} s; MLM loss ${last.mlm_loss.toFixed(2)} (acc ${last.mlm_acc.toFixed(3)}), SBO ${last.sbo_loss.toFixed(2)}`,
  )
  return join(run, `checkpoint-${stop}`)
}

const pt = process.env.BENCH_PT ?? pretrain()
if (!existsSync(pt)) throw new Error(`${pt}: no such checkpoint`)
const defaults = {BENCH_EPOCHS: '12', BENCH_LR: '3e-4', BENCH_TASK_LR: '1e-3', BENCH_SEG: '128', BENCH_FFNN: '150'}
const r = spawnSync('node', [join(ROOT, 'bench', 'coref-learning.mjs')], {
  stdio: 'inherit',
  env: {...defaults, ...process.env, BENCH_DATA: 'ontogum', BENCH_INIT: pt, BENCH_THREADS: threads, BENCH_TAG: process.env.BENCH_TAG ?? 'pretrained'},
})
process.exitCode = r.status ?? 1
