#!/usr/bin/env node
// The memory plan of `span pretrain` (src/core/train/memory-plan.ts) against the peak resident
// memory it measures (the kernel's maxrss of the process, what `/usr/bin/time -v` prints), for
// tiny, mini and small (and base on request) at lengths 128 and 512 and a few micro-batches, on blocks that fill every row:
//   npm run build && node bench/memory-plan.mjs [--runs tiny:128:32,base:512:2] [--steps 3] [--backend native]
// Blocks are cut from ../shared/data/wikitext/wikitext-2.test.txt tokenized with the BERT uncased
// vocabulary, every one exactly LEN tokens. Prints one row a run: the plan, the part of it that is
// the native backend's buffer pool (the run caps the pool there), the peak RSS measured (pool
// included), and the error; then the worst error and whether every peak stayed under its plan
// (issue 36: the plan is a promise). Peak RSS hardly depends on the machine's load; the seconds do.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'

const root = join(import.meta.dirname, '..')
const shared = process.env.SPAN_SHARED_DATA ?? join(root, '..', 'shared', 'data')
const DEFAULT_RUNS =
  'tiny:128:8,tiny:128:32,tiny:512:8,tiny:512:32,mini:128:8,mini:128:32,mini:512:4,mini:512:8,small:128:8,small:128:32,small:512:4,small:512:8'
const {values: o} = parseArgs({
  options: {
    runs: {type: 'string', default: DEFAULT_RUNS},
    steps: {type: 'string', default: '3'},
    backend: {type: 'string', default: 'native'},
  },
})
const span = (args, opts = {}) => spawnSync(process.execPath, [join(root, 'bin', 'run.js'), ...args], {encoding: 'utf8', maxBuffer: 1 << 30, ...opts})

/** Blocks of exactly len tokens ([CLS] … [SEP]) from the tokenized text, with the stream's header. */
function fullBlocks(tokens, len) {
  const lines = tokens.trimEnd().split('\n')
  const header = JSON.parse(lines[0])
  const {cls, sep} = header.special
  const ids = lines.slice(1).flatMap((l) => JSON.parse(l).ids)
  const out = [JSON.stringify({...header, kind: 'blocks'})]
  for (let i = 0, d = 0; i + len - 2 <= ids.length; i += len - 2) out.push(JSON.stringify({doc: d++, ids: [cls, ...ids.slice(i, i + len - 2), sep]}))
  return out.join('\n') + '\n'
}

/** Runs span pretrain; its last lines say the peak resident memory and the plan (the same maxrss /usr/bin/time reads). */
function measure(file, preset, batch, dir) {
  const t0 = performance.now()
  const r = span(
    ['pretrain', file, '--preset', preset, '--batch-size', String(batch), '--max-steps', o.steps, '--warmup', '1', '--backend', o.backend, '--out', dir],
    {stdio: ['ignore', 'ignore', 'pipe']},
  )
  if (r.status !== 0) throw new Error(`span pretrain failed (${r.status}): ${r.stderr.trim().split('\n').at(-1)}`)
  const m = /peak resident memory ([\d.]+) (MiB|GiB) \(the memory plan said about ([\d.]+) (MiB|GiB)\)/.exec(r.stderr)
  const pool = /native buffer pool ([\d.]+) (MiB|GiB)/.exec(r.stderr)
  const mib = (v, u) => Number(v) * (u === 'GiB' ? 1024 : 1)
  return {peak: mib(m[1], m[2]), plan: mib(m[3], m[4]), pool: pool ? mib(pool[1], pool[2]) : 0, seconds: (performance.now() - t0) / 1000}
}

const tmp = mkdtempSync(join(tmpdir(), 'span-memory-plan-'))
try {
  const tok = span(['tokenize', '--vocab', join(shared, 'vocab', 'bert-base-uncased.txt'), join(shared, 'wikitext', 'wikitext-2.test.txt')])
  if (tok.status !== 0) throw new Error(tok.stderr)
  const files = new Map()
  console.log(`span pretrain, ${o.steps} steps, backend ${o.backend}; peak RSS measured vs the memory plan (MiB)`)
  console.log('preset  len  batch   planned  (pool)   measured   error   seconds')
  let worst = 0
  let over = 0
  for (const run of o.runs.split(',')) {
    const [preset, len, batch] = run.split(':')
    if (!files.has(len)) {
      files.set(len, join(tmp, `blocks-${len}.ndjson`))
      writeFileSync(files.get(len), fullBlocks(tok.stdout, Number(len)))
    }
    const r = measure(files.get(len), preset, Number(batch), join(tmp, `run-${run.replace(/:/g, '-')}`))
    const err = (r.plan - r.peak) / r.peak
    worst = Math.max(worst, Math.abs(err))
    if (r.peak > r.plan) over++
    console.log(
      `${preset.padEnd(6)} ${len.padStart(4)} ${batch.padStart(6)} ${r.plan.toFixed(0).padStart(9)} ${r.pool.toFixed(0).padStart(7)} ${r.peak.toFixed(0).padStart(10)} ${(100 * err).toFixed(1).padStart(6)}% ${r.seconds.toFixed(0).padStart(8)}`,
    )
  }
  console.log(
    `largest error ${(100 * worst).toFixed(1)}%; ${over === 0 ? 'every peak under its plan' : `${over} peaks OVER their plan`}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  )
} finally {
  rmSync(tmp, {recursive: true, force: true})
}
