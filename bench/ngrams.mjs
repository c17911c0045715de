#!/usr/bin/env node
// Time and memory of the n-gram dictionary build (`span segment-ngrams --build`, Span
// Fine-tuning §4.1). Plain JS over dist/:
//   npx tsc -p tsconfig.build.json && node bench/ngrams.mjs [MB]
// Each case runs in a child process (its own peak RSS) through the command's own path:
// readLines (split2) → countNgrams → writeDictionary → a file under /tmp.
//   1. WikiText-2 valid (../shared/data), min-count 10, default budget (512 MB): size, time, RSS.
//   2. MB of text (default 100): the same file repeated, streamed from memory (never written
//      to disk), with the default budget and with --memory 16 (spilling sorted runs to /tmp).
//      The repeated text has only WikiText-2 valid's distinct n-grams, so it is the small budget
//      that shows the spill path's memory bound.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {fileURLToPath} from 'node:url'
import {join} from 'node:path'
import {MB, ROOT, TEXT, corpusStream} from './lib/corpus.mjs'

const root = ROOT
const dist = (p) => import(join(root, 'dist', p))

async function child(mb, memoryMb) {
  const {readLines} = await dist('core/stream/lines.js')
  const {LineWriter} = await dist('core/stream/writer.js')
  const {NgramCounter} = await dist('core/text/ngrams-count.js')
  const {countNgrams, writeDictionary} = await dist('core/text/ngrams-stream.js')
  const {WordSplitter} = await dist('core/text/ngrams.js')
  const {createWriteStream} = await import('node:fs')
  const bytes = mb === 0 ? statSync(TEXT).size : mb * MB
  const tmp = mkdtempSync(join(tmpdir(), 'span-bench-ngrams-'))
  const counter = new NgramCounter({maxN: 5, minCount: 10, maxSize: null, memoryBytes: memoryMb * MB, tmpDir: tmp})
  const t0 = process.hrtime.bigint()
  const out = createWriteStream(join(tmp, 'ngrams.tsv'))
  const w = new LineWriter(out)
  await countNgrams(readLines({name: 'bench', stream: corpusStream(bytes)}), 'bench', undefined, counter, new WordSplitter())
  const tCount = process.hrtime.bigint()
  const rssCounted = process.memoryUsage().rss / MB // RSS when counting ends (timers cannot sample the count loop)
  const entries = await writeDictionary(counter, w)
  await w.end()
  await new Promise((resolve) => out.end(resolve))
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  const countS = Number(tCount - t0) / 1e9
  await counter.cleanup()
  rmSync(tmp, {recursive: true, force: true})
  const rss = process.resourceUsage().maxRSS / 1024
  const res = {mb: +(bytes / MB).toFixed(2), memoryMb, entries, sentences: counter.sentences, ngrams: counter.occurrences, spills: counter.spills}
  console.log(JSON.stringify({...res, seconds: +s.toFixed(2), countSeconds: +countS.toFixed(2), mbPerS: +(bytes / MB / s).toFixed(2), peakRssMb: +rss.toFixed(1), rssCountedMb: Math.round(rssCounted)}))
}

function run(mb, memoryMb) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(mb), String(memoryMb)], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(r.stderr)
  const x = JSON.parse(r.stdout)
  const what = mb === 0 ? 'wikitext-2 valid' : `${mb} MB repeated`
  console.log(
    `${what.padEnd(17)} --memory ${String(memoryMb).padStart(3)}  ${String(x.entries).padStart(6)} n-grams kept (of ${x.ngrams} counted, ${x.sentences} lines)` +
      `  ${x.seconds.toFixed(1).padStart(6)} s (${x.mbPerS.toFixed(2)} MB/s)  peak RSS ${x.peakRssMb.toFixed(0)} MB (${x.rssCountedMb} MB when counting ends)  runs spilled ${x.spills}`,
  )
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]), Number(process.argv[4]))
} else {
  const mb = Number(process.argv[2] ?? 100)
  run(0, 512)
  run(mb, 512)
  run(mb, 16)
}
