#!/usr/bin/env node
// `span fill --head mlm` against transformers' BertForMaskedLM on the same checkpoint and masked texts
// (issue 32: inference's peak memory at most 1.2× transformers' for the same batch): peak RSS and CPU
// seconds of each side, each in its own process, measured the same way (/usr/bin/time %M and %U+%S),
// and wall seconds; the top-1 filling of every [MASK] run of both compared.
//   npm run build && node bench/fill-vs-transformers.mjs [--preset base] [--texts 128] [--words 70]
//     [--batch-size 1] [--k 5] [--rounds 1] [--threads 2] [--backend native] [--precisions fp32,bf16]
//     [--format safetensors|pytorch|pytorch-legacy]   the checkpoint's weights file (bench/lib/vs-transformers.mjs)
// bf16: span's --precision bf16 against BertForMaskedLM under torch.autocast bf16. span fill runs one
// text at a time, so transformers gets --batch-size 1 unless told otherwise (bench/fill_hf.py).
// The checkpoint: a freshly initialised model of the preset (random weights: memory does not depend
// on them) with the BERT uncased vocabulary, saved by span and rewritten by `span export` as
// --format says (model.safetensors by default; both sides load the same file). The texts: WikiText-2
// valid lines of at least 20 words, cut at --words words, with about 15% of the words masked in runs
// of 1-3 words, one [MASK] per WordPiece token (a fixed seed). The Python: the interop venv (tools/interop-env.sh; SPAN_TORCH_PYTHON overrides).
// Rounds alternate span and transformers per precision; each run prints one JSON line, then the ratios.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'
import {exportedCheckpoint, loadNow, python, timed} from './lib/vs-transformers.mjs'
import {WordPieceTokenizer} from '../dist/core/text/tokenizer.js'
import {loadVocab} from '../dist/core/text/vocab.js'

const root = join(import.meta.dirname, '..')
const data = join(root, '..', 'shared', 'data')
const {values: o} = parseArgs({
  options: {
    preset: {type: 'string', default: 'base'},
    texts: {type: 'string', default: '128'},
    words: {type: 'string', default: '70'},
    'batch-size': {type: 'string', default: '1'},
    k: {type: 'string', default: '5'},
    rounds: {type: 'string', default: '1'},
    threads: {type: 'string', default: '2'},
    backend: {type: 'string', default: 'native'},
    precisions: {type: 'string', default: 'fp32,bf16'},
    format: {type: 'string', default: 'safetensors'},
    vocab: {type: 'string', default: join(data, 'vocab', 'bert-base-uncased.txt')},
    text: {type: 'string', default: join(data, 'wikitext', 'wikitext-2.valid.txt')},
  },
})

/** Masked texts: WikiText lines, ~15% of the words in runs of 1-3 replaced by one [MASK] per token. */
function maskedTexts(tok) {
  let seed = 12345
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  const out = []
  for (const line of readFileSync(o.text, 'utf8').split('\n')) {
    const words = line.trim().split(/\s+/).slice(0, Number(o.words))
    if (words.length < 20 || words[0] === '=') continue
    const masked = new Array(words.length).fill(false)
    for (let n = 0; n < Math.round((words.length * 0.15) / 2); n++) {
      const len = 1 + Math.floor(rand() * 3)
      const at = Math.floor(rand() * (words.length - len))
      if (masked.slice(Math.max(0, at - 1), at + len + 1).some(Boolean)) continue // runs apart, never merged
      for (let i = at; i < at + len; i++) masked[i] = true
    }
    const parts = words.map((w, i) =>
      masked[i]
        ? tok
            .encode(w)
            .map(() => '[MASK]')
            .join(' ')
        : w,
    )
    if (parts.some((p) => p === '')) continue // a word of no tokens
    out.push(parts.join(' '))
    if (out.length === Number(o.texts)) break
  }
  return out
}

/** Top-1 fillings of every run: span's output against transformers'. */
function agreement(spanOut, hfOut) {
  const s = readFileSync(spanOut, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).spans.map((x) => x.fills[0].text))
  const h = readFileSync(hfOut, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).runs)
  let [same, runs] = [0, 0]
  s.forEach((row, i) => row.forEach((t, j) => ((runs += 1), (same += t === h[i]?.[j] ? 1 : 0))))
  return {runs, top1_same: same, runs_hf: h.reduce((a, r) => a + r.length, 0)}
}

const tmp = mkdtempSync(join(tmpdir(), 'span-fill-vs-hf-'))
try {
  const vocab = loadVocab(o.vocab)
  const ckpt = await exportedCheckpoint(tmp, o.preset, o.vocab, vocab.tokens.length, o.format)
  const texts = join(tmp, 'texts.txt')
  const lines = maskedTexts(new WordPieceTokenizer(vocab, {lowercase: !vocab.cased}))
  writeFileSync(texts, lines.join('\n') + '\n')
  const py = python()
  const rows = []
  const shape = {
    format: o.format,
    preset: o.preset,
    texts: lines.length,
    words: Number(o.words),
    batch_size: Number(o['batch-size']),
    k: Number(o.k),
    threads: Number(o.threads),
  }
  for (let round = 1; round <= Number(o.rounds); round++) {
    for (const precision of o.precisions.split(',')) {
      const fill = ['fill', texts, '--model', ckpt, '--head', 'mlm', '--k', o.k, '--backend', o.backend, '--threads', o.threads, '--precision', precision]
      const s = timed(process.execPath, [join(root, 'bin', 'run.js'), ...fill, '-o', join(tmp, 'span.ndjson')], join(tmp, 'span.time'))
      const hfArgs = [
        join(root, 'bench', 'fill_hf.py'),
        ckpt,
        texts,
        join(tmp, 'hf.ndjson'),
        '--batch-size',
        o['batch-size'],
        '--k',
        o.k,
        '--threads',
        o.threads,
      ]
      const h = timed(py, [...hfArgs, ...(precision === 'bf16' ? ['--bf16'] : [])], join(tmp, 'hf.time'))
      const hf = JSON.parse(h.stdout.trim().split('\n').at(-1))
      const row = {
        bench: 'fill_vs_transformers',
        precision,
        round,
        ...shape,
        span: {wall_s: s.wall_s, cpu_s: s.cpu_s, peak_rss_mib: s.peak_rss_mib},
        transformers: {wall_s: h.wall_s, cpu_s: h.cpu_s, peak_rss_mib: h.peak_rss_mib, ...hf},
        rss_ratio: +(s.peak_rss_mib / h.peak_rss_mib).toFixed(2),
        ...agreement(join(tmp, 'span.ndjson'), join(tmp, 'hf.ndjson')),
        load: loadNow(),
      }
      rows.push(row)
      console.log(JSON.stringify(row))
    }
  }
  const by = (p) => rows.filter((r) => r.precision === p).map((r) => r.rss_ratio)
  console.log(JSON.stringify({bench: 'fill_vs_transformers_summary', rss_ratio: Object.fromEntries(o.precisions.split(',').map((p) => [p, by(p)]))}))
} finally {
  rmSync(tmp, {recursive: true, force: true})
}
