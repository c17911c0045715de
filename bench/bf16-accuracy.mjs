#!/usr/bin/env node
// bf16 against fp32 on the native backend (issue 32's accuracy targets), through the commands:
//   npm run build && node bench/bf16-accuracy.mjs [--steps 20] [--batch-size 8] [--len 128] [--squad-steps 20] [--threads N]
// 1. `span pretrain --preset tiny` (the full preset) on WikiText-2 valid, --steps steps, at fp32 and
//    at bf16 (the same data, seed and order): each step's loss and the last one's relative gap
//    (target: within 2%).
// 2. `span finetune squad --preset tiny` on the first XQuAD questions, --squad-steps steps, both
//    precisions (target: within 2%).
// 3. `span encode` of the pretraining blocks with the fp32 run's checkpoint, at fp32 and at bf16:
//    ‖bf16 − fp32‖ / ‖fp32‖ per vector, largest and median (target: 1e-2).
// Reads ../shared/data (wikitext, squad, vocab). Needs a CPU with bf16 dot products (span doctor),
// or SPAN_CPU_FLAGS=avx512_bf16 to pretend one (bf16 is rounding plus fp32 products, so it runs
// anywhere). Prints one JSON line per part, then the verdicts; asserts nothing.
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'
import {TEXT} from './lib/corpus.mjs'
import {spanSync} from './lib/span.mjs'

const root = join(import.meta.dirname, '..')
const data = join(root, '..', 'shared', 'data')
const {values: o} = parseArgs({
  options: {
    steps: {type: 'string', default: '20'},
    'batch-size': {type: 'string', default: '8'},
    len: {type: 'string', default: '128'},
    'squad-steps': {type: 'string', default: '20'},
    threads: {type: 'string'},
    keep: {type: 'boolean', default: false},
  },
})
delete process.env.SPAN_NATIVE_PRECISION // each run names its precision
const tmp = mkdtempSync(join(tmpdir(), 'span-bf16-accuracy-'))
const common = ['--backend', 'native', ...(o.threads ? ['--threads', o.threads] : [])]
const losses = (stdout) =>
  stdout
    .split('\n')
    .filter((l) => l.includes('"loss"'))
    .map((l) => JSON.parse(l).loss)
const gap = (a, b) => Math.abs(a - b) / Math.abs(b)

/** The masked blocks of WikiText-2 valid's first lines: enough for --steps batches. */
function masked() {
  const text = readFileSync(TEXT, 'utf8').split('\n').slice(0, 3000).join('\n')
  const vocab = join(data, 'vocab', 'bert-base-uncased.txt')
  const tokens = spanSync(['tokenize', '--vocab', vocab], {input: text}).stdout
  const blocks = spanSync(['block', '--len', o.len], {input: tokens}).stdout
  writeFileSync(join(tmp, 'blocks.ndjson'), blocks)
  writeFileSync(join(tmp, 'masked.ndjson'), spanSync(['mask', '--seed', '1'], {input: blocks}).stdout)
  return join(tmp, 'masked.ndjson')
}

function pretrain(input, precision) {
  const out = join(tmp, `pretrain-${precision}`)
  const args = ['pretrain', input, '--preset', 'tiny', '--batch-size', o['batch-size'], '--max-steps', o.steps, '--save-every', o.steps, '--log-every', '1']
  const r = spanSync([...args, ...common, '--precision', precision, '--out', out])
  return {losses: losses(r.stdout), out, secs: r.secs}
}

function squad(precision) {
  const n = Number(o['squad-steps']) * 8
  const args = [
    'finetune',
    'squad',
    '--preset',
    'tiny',
    '--train',
    join(data, 'squad', 'xquad.en.json'),
    '--max-train-examples',
    String(n),
    '--batch-size',
    '8',
  ]
  const r = spanSync([
    ...args,
    '--epochs',
    '1',
    '--log-every',
    '1',
    '--max-len',
    '128',
    ...common,
    '--precision',
    precision,
    '--out',
    join(tmp, `squad-${precision}`),
  ])
  return {losses: losses(r.stdout), secs: r.secs}
}

function encode(model, precision) {
  const ckpt = join(
    model,
    readdirSync(model).find((d) => d.startsWith('checkpoint-')),
  )
  const r = spanSync(['encode', join(tmp, 'blocks.ndjson'), '--model', ckpt, '--pool', 'mean', '--precision', '9', ...common, '--compute-precision', precision])
  return r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l).vector)
}

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
const report = (part, fp32, bf16) => {
  const last = gap(bf16.losses.at(-1), fp32.losses.at(-1))
  const worst = bf16.losses.reduce((m, l, i) => Math.max(m, gap(l, fp32.losses[i])), 0)
  console.log(
    JSON.stringify({
      part,
      steps: fp32.losses.length,
      fp32: fp32.losses,
      bf16: bf16.losses,
      last_gap: last,
      worst_step_gap: worst,
      secs: {fp32: fp32.secs, bf16: bf16.secs},
    }),
  )
  return `${part}: last loss fp32 ${fp32.losses.at(-1).toFixed(4)}, bf16 ${bf16.losses.at(-1).toFixed(4)}: ${(100 * last).toPrecision(2)}% apart (worst step ${(100 * worst).toPrecision(2)}%): ${last < 0.02 ? 'within' : 'NOT within'} 2%`
}

const input = masked()
const [p32, p16] = [pretrain(input, 'fp32'), pretrain(input, 'bf16')]
const verdicts = [report('pretrain tiny', p32, p16)]
verdicts.push(report('finetune squad tiny', squad('fp32'), squad('bf16')))
const [e32, e16] = [encode(p32.out, 'fp32'), encode(p32.out, 'bf16')]
const rel = e16.map((v, i) => norm(v.map((x, j) => x - e32[i][j])) / norm(e32[i])).sort((a, b) => a - b)
console.log(JSON.stringify({part: 'encode tiny', vectors: rel.length, max_rel: rel.at(-1), median_rel: rel[rel.length >> 1]}))
verdicts.push(
  `encode tiny: ${rel.length} vectors, ‖bf16 − fp32‖/‖fp32‖ largest ${rel.at(-1).toExponential(2)}, median ${rel[rel.length >> 1].toExponential(2)}: ${rel.at(-1) < 1e-2 ? 'within' : 'NOT within'} 1e-2`,
)
for (const v of verdicts) console.log(v)
if (!o.keep) rmSync(tmp, {recursive: true, force: true})
