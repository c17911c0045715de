#!/usr/bin/env node
/**
 * GLUE fine-tuning through the commands, plain vs Span Fine-tuning (Bao et al. §3–4):
 *   1. an n-gram dictionary with `span segment-ngrams --build` (wikitext-2 valid+test and the
 *      SST-2 training sentences; --min-count BENCH_MIN_COUNT),
 *   2. SST-2: a seeded random subset of train (BENCH_SST2_N sentences), `span finetune glue` plain
 *      and with --span-ft, `span predict glue` on dev, `span eval glue`, `span eval compare`
 *      (McNemar), beside the dev majority-class baseline,
 *   3. MRPC (a random BENCH_MRPC_N of its 3,668 training pairs): the same pair of runs.
 * The four fine-tuning runs go side by side (separate processes), so their times overlap.
 * Data is read from ../shared/data (never copied into the repository); work files go to
 * bench/out/glue-finetune/. Every figure is printed at the end, with the settings and times.
 *
 *   npm run build && node bench/glue-finetune.mjs
 * Settings (env): BENCH_INIT (checkpoint dir; default: a random `tiny` model), BENCH_PRESET (tiny),
 * BENCH_SST2_N (5000), BENCH_MRPC_N (2000; 0 = all), BENCH_EPOCHS (2), BENCH_MAX_LEN (64), BENCH_LR (3e-4),
 * BENCH_BATCH (32), BENCH_SEED (1), BENCH_BACKEND (auto), BENCH_MIN_COUNT (10), BENCH_TASKS (sst2,mrpc).
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {spanSync} from './lib/span.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DATA = join(ROOT, '..', 'shared', 'data')
const OUT = join(ROOT, 'bench', 'out', 'glue-finetune')
const env = (k, d) => process.env[k] ?? d
const S = {
  init: env('BENCH_INIT', ''), preset: env('BENCH_PRESET', 'tiny'), sst2N: Number(env('BENCH_SST2_N', 5000)),
  mrpcN: Number(env('BENCH_MRPC_N', 2000)), epochs: env('BENCH_EPOCHS', '2'), maxLen: env('BENCH_MAX_LEN', '64'),
  lr: env('BENCH_LR', '3e-4'), batch: env('BENCH_BATCH', '32'), seed: env('BENCH_SEED', '1'),
  backend: env('BENCH_BACKEND', 'auto'), minCount: env('BENCH_MIN_COUNT', '10'), tasks: env('BENCH_TASKS', 'sst2,mrpc').split(','),
}

/** Runs `span …` (stdin from `input`); returns stdout, stderr and seconds; exits on failure. */
const span = (args, input) => spanSync(args, {input})

/** span … asynchronously (the four fine-tuning runs go side by side). */
function spanAsync(args) {
  const t0 = performance.now()
  return new Promise((resolve) => {
    const p = spawn('node', [join(ROOT, 'bin', 'run.js'), ...args], {stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('close', (code) => {
      if (code !== 0) {
        process.stderr.write(`span ${args.join(' ')} failed (${code}):\n${stderr}`)
        process.exit(1)
      }
      resolve({stdout, stderr, secs: (performance.now() - t0) / 1000})
    })
  })
}

/** A seeded (LCG) random subset of a TSV's data rows, the header kept; n = 0 keeps all. */
function subset(src, dst, n, seed) {
  const [header, ...rows] = readFileSync(src, 'utf8').split('\n').filter((l) => l.length > 0)
  let s = seed >>> 0
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
  for (let i = rows.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[rows[i], rows[j]] = [rows[j], rows[i]]
  }
  const kept = n > 0 ? rows.slice(0, n) : rows
  writeFileSync(dst, [header, ...kept].join('\n') + '\n')
  return kept.length
}

/** Majority-class accuracy of a dev TSV (label column by header name). */
function majority(devPath, labelCol) {
  const [header, ...rows] = readFileSync(devPath, 'utf8').replace(/^\uFEFF/, '').split('\n').filter((l) => l.length > 0)
  const col = header.split('\t').indexOf(labelCol)
  const counts = new Map()
  for (const r of rows) counts.set(r.split('\t')[col], (counts.get(r.split('\t')[col]) ?? 0) + 1)
  const [label, count] = [...counts].sort((a, b) => b[1] - a[1])[0]
  return {label, count, n: rows.length, acc: count / rows.length}
}

function buildDict() {
  const path = join(OUT, 'ngrams.txt')
  const sst = readFileSync(join(DATA, 'glue', 'SST-2', 'train.tsv'), 'utf8').split('\n').slice(1).map((l) => l.split('\t')[0])
  const wiki = ['valid', 'test'].map((s) => readFileSync(join(DATA, 'wikitext', `wikitext-2.${s}.txt`), 'utf8')).join('\n')
  const r = span(['segment-ngrams', '--build', '--min-count', S.minCount, '-o', path], wiki + '\n' + sst.join('\n') + '\n')
  const entries = Number(/entries=(\d+)/.exec(readFileSync(path, 'utf8').split('\n', 1)[0])[1])
  return {path, entries, secs: r.secs}
}

/** finetune → predict dev → eval; returns the figures of one run. */
async function runOne(task, train, dev, name, extra) {
  const out = join(OUT, name)
  const model = S.init ? ['--init', S.init] : ['--preset', S.preset]
  const ft = await spanAsync(['finetune', 'glue', '--task', task, ...model, '--train', train, '--dev', dev, '--out', out,
    '--epochs', S.epochs, '--max-len', S.maxLen, '--lr', S.lr, '--batch-size', S.batch, '--seed', S.seed, '--backend', S.backend, ...extra])
  const records = ft.stdout.trim().split('\n').map((l) => JSON.parse(l))
  const devRecs = records.filter((r) => r.split === 'dev')
  const params = /: (\d+) parameters(.*)/.exec(ft.stderr)
  const pred = join(OUT, `${name}.tsv`)
  const pr = span(['predict', 'glue', '--model', out, '--data', dev, '-o', pred, '--backend', S.backend])
  const ev = JSON.parse(span(['eval', 'glue', '--task', task, '--gold', dev, '--pred', pred, '--json']).stdout)
  const losses = records.filter((r) => r.split !== 'dev' && typeof r.loss === 'number') // not dev scores nor {step, checkpoint}
  const steps = losses.at(-1)?.step ?? 0
  return {name, ft: ft.secs, predSecs: pr.secs, steps, devRecs, eval: ev, pred, params: params ? params[1] + params[2] : '?',
    firstLoss: losses[0]?.loss, lastLoss: losses.at(-1)?.loss}
}

async function taskRuns(task, dir, n, labelCol, dict) {
  const train = join(OUT, `${task}-train.tsv`)
  const kept = subset(join(DATA, 'glue', dir, 'train.tsv'), train, n, Number(S.seed))
  const dev = join(DATA, 'glue', dir, 'dev.tsv')
  const [plain, sf] = await Promise.all([
    runOne(task, train, dev, `${task}-plain`, []),
    runOne(task, train, dev, `${task}-spanft`, ['--span-ft', '--dict', dict.path]),
  ])
  const cmp = JSON.parse(span(['eval', 'compare', '--task', task, '--gold', dev, '--a', plain.pred, '--b', sf.pred, '--json']).stdout)
  return {task, kept, maj: majority(dev, labelCol), plain, sf, cmp}
}

function report(dict, results, total) {
  const f = (x) => (typeof x === 'number' ? x.toFixed(4) : String(x))
  console.log(`\nsettings: ${JSON.stringify(S)}`)
  console.log(`dictionary: ${dict.entries} n-grams (wikitext-2 valid+test + SST-2 train sentences, min-count ${S.minCount}), built in ${dict.secs.toFixed(1)} s`)
  for (const r of results) {
    console.log(`\n${r.task}: ${r.kept} training examples; dev majority class "${r.maj.label}" ${r.maj.count}/${r.maj.n} = ${f(r.maj.acc)}`)
    for (const x of [r.plain, r.sf]) {
      const metrics = Object.entries(x.eval).filter(([k]) => !['task', 'n'].includes(k)).map(([k, v]) => `${k} ${f(v)}`).join(', ')
      console.log(`  ${x.name.padEnd(14)} ${metrics}; per-epoch dev score ${x.devRecs.map((d) => f(d.score)).join(' → ')}; loss ${f(x.firstLoss)} → ${f(x.lastLoss)}; ${x.steps} steps in ${x.ft.toFixed(1)} s (incl. dev evals), predict ${x.predSecs.toFixed(1)} s; params:${x.params}`)
    }
    console.log(`  McNemar (plain vs span-ft): b=${r.cmp.b} c=${r.cmp.c} test=${r.cmp.test} p=${f(r.cmp.p_value)} (acc ${f(r.cmp.acc_a)} vs ${f(r.cmp.acc_b)})`)
  }
  console.log(`\ntotal ${total.toFixed(1)} s`)
}

const t0 = performance.now()
if (!existsSync(join(ROOT, 'dist', 'commands', 'finetune', 'glue.js'))) throw new Error('run npm run build first')
mkdirSync(OUT, {recursive: true})
const dict = buildDict()
const results = await Promise.all([
  ...(S.tasks.includes('sst2') ? [taskRuns('sst2', 'SST-2', S.sst2N, 'label', dict)] : []),
  ...(S.tasks.includes('mrpc') ? [taskRuns('mrpc', 'MRPC', S.mrpcN, 'Quality', dict)] : []),
])
report(dict, results, (performance.now() - t0) / 1000)
