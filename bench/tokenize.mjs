#!/usr/bin/env node
// Throughput and memory of `span tokenize` (streaming, flat memory: docs/formats.md#conventions). Plain JS over dist/:
//   npx tsc -p tsconfig.build.json && node bench/tokenize.mjs [MB ...]
// For each size (default 10 and 100 MB) a child process streams WikiText-2 valid (from
// ../shared/data, repeated in memory, never written to disk) through the command's own path:
// readLineBatches → tokenizeText (tokenizer + NDJSON records) → LineWriter → /dev/null, and
// reports MB/s of raw input and the peak RSS (which should not grow with the input). Also:
// split2 framing (readLines) and byte framing (readLineBatches) alone, the tokenizer alone,
// and a plain byte-sum loop as a reference for the machine's speed at the moment (shared
// machines vary by several times with load: compare ratios to it across runs).
// MB/s is per wall-clock second and per CPU second (one thread but for GC helpers; on a shared
// machine the CPU figure is the steadier one). Cased bert-base vocabulary unless BENCH_VOCAB /
// BENCH_UNCASED=1 say otherwise.
import {spawnSync} from 'node:child_process'
import {createWriteStream, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {join} from 'node:path'
import {MB, ROOT, TEXT, corpusStream} from './lib/corpus.mjs'

const root = ROOT
const dist = (p) => import(join(root, 'dist', p))
const VOCAB = process.env.BENCH_VOCAB ?? join(root, '..', 'shared', 'data', 'vocab', 'bert-base-cased.txt')
const LOWER = process.env.BENCH_UNCASED === '1'

async function child(mode, mb) {
  const {readLines} = await dist('core/stream/lines.js')
  const {readLineBatches} = await dist('core/stream/bytelines.js')
  const {LineWriter} = await dist('core/stream/writer.js')
  const {loadVocab} = await dist('core/text/vocab.js')
  const {WordPieceTokenizer} = await dist('core/text/tokenizer.js')
  const {tokenizeText} = await dist('core/text/tokenize-stage.js')
  const tok = new WordPieceTokenizer(loadVocab(VOCAB), {lowercase: LOWER})
  const bytes = mb * MB
  const src = {name: 'bench', stream: corpusStream(bytes)}
  const t0 = process.hrtime.bigint()
  const c0 = process.cpuUsage()
  if (mode === 'full') {
    const out = createWriteStream('/dev/null')
    const w = new LineWriter(out)
    await tokenizeText(readLineBatches(src), tok, w, {tokens: false, docStart: null})
    await w.end()
    await new Promise((resolve) => out.end(resolve))
  } else if (mode === 'split2') {
    let n = 0
    for await (const line of readLines(src)) n += line.text.length
    if (n < 0) console.error(n) // keep the loop
  } else if (mode === 'bytesum') {
    const text = readFileSync(TEXT)
    let sum = 0
    for (let done = 0; done < bytes; done += text.length) for (let i = 0; i < text.length; i++) sum = (sum + text[i]) | 0
    if (sum === 0.5) console.error(sum) // keep the loop
  } else if (mode === 'bytelines') {
    let n = 0
    for await (const b of readLineBatches(src)) n += b.count
    if (n < 0) console.error(n) // keep the loop
  } else {
    const text = readFileSync(TEXT)
    let done = 0
    let ids = 0
    for (let s = 0; done < bytes; ) {
      const nl = text.indexOf(10, s)
      ids += tok.encodeBytes(text, s, nl)
      done += nl + 1 - s
      s = nl + 1 === text.length ? 0 : nl + 1
    }
    if (ids < 0) console.error(ids) // keep the loop
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  const c1 = process.cpuUsage(c0)
  const cpu = (c1.user + c1.system) / 1e6
  const rss = process.resourceUsage().maxRSS / 1024
  console.log(JSON.stringify({mode, mb, seconds: +s.toFixed(3), cpuSeconds: +cpu.toFixed(3), mbPerS: +(mb / s).toFixed(1), mbPerCpuS: +(mb / cpu).toFixed(1), peakRssMb: +rss.toFixed(1)}))
}

function run(mode, mb) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, String(mb)], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(r.stderr)
  const res = JSON.parse(r.stdout)
  const f = (x, w = 6) => x.toFixed(1).padStart(w)
  console.log(`${mode.padEnd(9)} ${String(mb).padStart(4)} MB  ${f(res.mbPerS)} MB/s wall (${f(res.seconds)} s)  ${f(res.mbPerCpuS)} MB/s of CPU time (${f(res.cpuSeconds)} s)  peak RSS ${f(res.peakRssMb, 4)} MB`)
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]))
} else {
  const sizes = process.argv.slice(2).map(Number)
  console.log(`span tokenize on ${TEXT} (repeated), vocab ${VOCAB}, ${LOWER ? 'uncased' : 'cased'}, node ${process.version}`)
  run('bytesum', 1000) // machine reference: a plain loop over bytes, to compare runs across machines and load
  run('split2', 100)
  run('bytelines', 100)
  run('encode', 100)
  for (const mb of sizes.length ? sizes : [10, 100]) run('full', mb)
}
