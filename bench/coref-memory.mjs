#!/usr/bin/env node
/**
 * Does a LitBank document fit in training? One `finetune coref` step on the longest LitBank
 * document (3,419 words) for each BENCH_CASES preset:segments, the default run of 3 segments of
 * 384 sub-tokens or the whole document at once (99), under /usr/bin/time -v: peak RSS and seconds.
 * `base:99` is left out by default: `mini:99` already peaks near 14 GiB (the pair tensors grow
 * with k = 0.4·N), and base's would not fit a 24 GiB machine shared with others. Also prints the document's sizes: sub-tokens N,
 * candidates K, top spans k = ⌊0.4·N⌋, antecedents c, and the pair tensors' elements.
 *
 *   npm run build && node bench/coref-memory.mjs
 * Settings (env): BENCH_CASES (mini:3,mini:99,base:3; preset:--max-training-segments), BENCH_FFNN (1000), BENCH_THREADS (2),
 * BENCH_HEAD (--head: joshi or s2e, whose pair scores are k² but no k·c·D tensors).
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readdirSync, rmSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CONLL = join(ROOT, '..', 'shared', 'data', 'coref', 'litbank', 'conll')
const OUT = join(ROOT, 'bench', 'out', 'coref-memory')
const env = (k, d) => process.env[k] ?? d
const cases = env('BENCH_CASES', 'mini:3,mini:99,base:3')
  .split(',')
  .map((c) => c.split(':'))
const runs = [...new Set(cases.map(([, m]) => m))]
const ffnn = env('BENCH_FFNN', '1000')

const {readConll} = await import('../dist/core/tasks/coref/conll.js')
const {corefUnits} = await import('../dist/core/tasks/coref/adapter.js')
const {COREF_DEFAULTS} = await import('../dist/core/tasks/coref/config.js')
const {candidateSpans, windowOf} = await import('../dist/core/tasks/coref/spans.js')
const {WordPieceTokenizer} = await import('../dist/core/text/tokenizer.js')
const {loadVocab, DEFAULT_VOCAB} = await import('../dist/core/text/vocab.js')

const files = readdirSync(CONLL).map((f) => join(CONLL, f))
const file = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]
const [doc] = readConll(file)
const [u] = corefUnits([doc], new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase: false}), COREF_DEFAULTS)
console.log(`${doc.key}: ${doc.words.length} words, ${u.wordOf.length} sub-tokens, ${u.segments.length} segments of ≤ 384`)
for (const m of runs) {
  const d = Number(m) < u.segments.length ? windowOf(u, 0, Number(m)) : u
  const N = d.wordOf.length
  const K = candidateSpans(d, 30).starts.length
  const k = Math.floor(0.4 * N)
  console.log(`  --max-training-segments ${m}: N ${N}, K ${K} candidates, k ${k}, c 50: k·c = ${k * 50} pairs; k² = ${k * k} coarse scores`)
}
mkdirSync(OUT, {recursive: true})
for (const [p, m] of cases) {
  const out = join(OUT, `${p}-${m}`)
  rmSync(out, {recursive: true, force: true})
  const args = [
    'finetune',
    'coref',
    '--preset',
    p,
    '--train',
    file,
    '--out',
    out,
    '--epochs',
    '1',
    '--max-training-segments',
    m,
    '--ffnn-size',
    ffnn,
    '--threads',
    env('BENCH_THREADS', '2'),
    ...(process.env.BENCH_HEAD ? ['--head', process.env.BENCH_HEAD] : []),
  ]
  const t0 = performance.now()
  const r = spawnSync('/usr/bin/time', ['-v', 'node', join(ROOT, 'bin', 'run.js'), ...args], {encoding: 'utf8'})
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1]
  const loss = r.stdout.split('\n').find((l) => l.includes('"loss"'))
  console.log(
    `${p} --max-training-segments ${m}: exit ${r.status}, peak RSS ${rss ? (Number(rss) / 1048576).toFixed(2) : '?'} GiB, ${((performance.now() - t0) / 1000).toFixed(0)} s (one step and the save); ${loss ?? r.stderr.slice(-300)}`,
  )
  rmSync(out, {recursive: true, force: true})
}
