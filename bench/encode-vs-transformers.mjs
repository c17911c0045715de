#!/usr/bin/env node
// `span encode` against transformers' BertModel on the same checkpoint and blocks (issue 32): peak
// RSS and CPU seconds of each side, each in its own process, measured the same way (/usr/bin/time
// %M and %U+%S), and wall seconds; the vectors of both compared (max |Δ| over max |·|).
//   npm run build && node bench/encode-vs-transformers.mjs [--preset base] [--blocks 256] [--len 128]
//     [--batch-size 32] [--pool mean] [--rounds 1] [--threads 2] [--backend native] [--span-only]
//     [--precision fp32|bf16]   bf16: span's --compute-precision bf16 against BertModel under torch.autocast bf16
//     [--format safetensors|pytorch|pytorch-legacy]   the checkpoint's weights file (bench/lib/vs-transformers.mjs)
// The checkpoint: a freshly initialised model of the preset (random weights: memory and time do not
// depend on them) with the BERT uncased vocabulary, saved by span and rewritten by `span export`
// as --format says (model.safetensors by default; both sides load the same file). The blocks:
// WikiText-2 valid through `span tokenize | span block --len`. The Python: the interop venv (tools/interop-env.sh; SPAN_TORCH_PYTHON overrides).
// Rounds alternate span and transformers; each round prints one JSON line, then the ratios per round.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'
import {exportedCheckpoint, loadNow, python, timed} from './lib/vs-transformers.mjs'

const root = join(import.meta.dirname, '..')
const data = join(root, '..', 'shared', 'data')
const {values: o} = parseArgs({
  options: {
    preset: {type: 'string', default: 'base'},
    blocks: {type: 'string', default: '256'},
    len: {type: 'string', default: '128'},
    'batch-size': {type: 'string', default: '32'},
    pool: {type: 'string', default: 'mean'},
    rounds: {type: 'string', default: '1'},
    threads: {type: 'string', default: '2'},
    backend: {type: 'string', default: 'native'},
    precision: {type: 'string', default: 'fp32'},
    format: {type: 'string', default: 'safetensors'},
    'span-only': {type: 'boolean', default: false},
    vocab: {type: 'string', default: join(data, 'vocab', 'bert-base-uncased.txt')},
    text: {type: 'string', default: join(data, 'wikitext', 'wikitext-2.valid.txt')},
  },
})
const span = (args, opts = {}) =>
  spawnSync(process.execPath, [join(root, 'bin', 'run.js'), ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 30, ...opts})

/** What every line says of the run: precision, round and the workload. */
const shape = (round) => ({
  precision: o.precision,
  format: o.format,
  round,
  preset: o.preset,
  blocks: Number(o.blocks),
  len: Number(o.len),
  batch_size: Number(o['batch-size']),
  pool: o.pool,
})

/** Vectors of two NDJSON outputs: max |Δ| over max |reference|. */
function compare(a, b) {
  const [x, y] = [a, b].map((f) =>
    readFileSync(f, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).vector ?? JSON.parse(l).hidden.flat()),
  )
  let [err, scale] = [0, 0]
  x.forEach((row, i) => row.forEach((v, j) => ((err = Math.max(err, Math.abs(v - y[i][j]))), (scale = Math.max(scale, Math.abs(y[i][j]))))))
  return x.length === y.length ? +(err / scale).toExponential(2) : `row counts differ: ${x.length} vs ${y.length}`
}

const tmp = mkdtempSync(join(tmpdir(), 'span-encode-vs-hf-'))
try {
  const vocabSize = readFileSync(o.vocab, 'utf8').trimEnd().split('\n').length
  const ckpt = await exportedCheckpoint(tmp, o.preset, o.vocab, vocabSize, o.format)
  const tok = span(['tokenize', '--vocab', o.vocab, o.text])
  const blk = span(['block', '--len', o.len], {input: tok.stdout})
  const lines = blk.stdout.split('\n').filter(Boolean)
  const blocks = join(tmp, 'blocks.ndjson')
  writeFileSync(blocks, lines.slice(0, Number(o.blocks) + 1).join('\n') + '\n') // the header, then the blocks
  const py = o['span-only'] ? null : python()
  const rows = []
  for (let round = 1; round <= Number(o.rounds); round++) {
    const s = timed(
      process.execPath,
      [
        join(root, 'bin', 'run.js'),
        'encode',
        blocks,
        '--model',
        ckpt,
        '--pool',
        o.pool,
        '--batch-size',
        o['batch-size'],
        '--backend',
        o.backend,
        '--threads',
        o.threads,
        '--compute-precision',
        o.precision,
        '-o',
        join(tmp, 'span.ndjson'),
      ],
      join(tmp, 'span.time'),
    )
    if (o['span-only']) {
      console.log(
        JSON.stringify({bench: 'encode_span', ...shape(round), span: {wall_s: s.wall_s, cpu_s: s.cpu_s, peak_rss_mib: s.peak_rss_mib}, load: loadNow()}),
      )
      continue
    }
    const h = timed(
      py,
      [
        join(root, 'bench', 'encode_hf.py'),
        ckpt,
        blocks,
        join(tmp, 'hf.ndjson'),
        '--batch-size',
        o['batch-size'],
        '--pool',
        o.pool,
        '--threads',
        o.threads,
        ...(o.precision === 'bf16' ? ['--bf16'] : []),
      ],
      join(tmp, 'hf.time'),
    )
    const hf = JSON.parse(h.stdout.trim().split('\n').at(-1))
    const row = {
      bench: 'encode_vs_transformers',
      ...shape(round),
      span: {wall_s: s.wall_s, cpu_s: s.cpu_s, peak_rss_mib: s.peak_rss_mib},
      transformers: {wall_s: h.wall_s, cpu_s: h.cpu_s, peak_rss_mib: h.peak_rss_mib, ...hf},
      rss_ratio: +(s.peak_rss_mib / h.peak_rss_mib).toFixed(2),
      cpu_ratio: +(s.cpu_s / h.cpu_s).toFixed(2),
      vectors_rel_diff: compare(join(tmp, 'span.ndjson'), join(tmp, 'hf.ndjson')),
      load: loadNow(),
    }
    rows.push(row)
    console.log(JSON.stringify(row))
  }
  if (rows.length)
    console.log(JSON.stringify({bench: 'encode_vs_transformers_summary', rss_ratio: rows.map((r) => r.rss_ratio), cpu_ratio: rows.map((r) => r.cpu_ratio)}))
} finally {
  rmSync(tmp, {recursive: true, force: true})
}
