#!/usr/bin/env node
// Time of `span eval coref` (the official CoNLL-2012 scorer's metrics, src/core/metrics/coref/)
// on all of LitBank (100 documents, 29,103 mentions; ../shared/data/coref). Plain JS over dist/:
//   npm run build && node bench/eval-coref.mjs
// Prints, per case, the reading and the scoring time: gold against itself, against every
// document's mentions merged into one chain (CEAF's one-row-per-key-chain worst case) and
// against every mention a singleton (the largest number of response chains); then the whole
// command (`node bin/run.js eval coref`, gold against itself) as a process.
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {ROOT} from './lib/corpus.mjs'

const GOLD = join(ROOT, '..', 'shared', 'data', 'coref', 'litbank', 'conll')
if (!existsSync(GOLD)) {
  console.log(`skipped: ${GOLD} is absent`)
  process.exit(0)
}
const {readConll} = await import(join(ROOT, 'dist', 'core', 'tasks', 'coref', 'conll.js'))
const {scoreCoref, conllF1} = await import(join(ROOT, 'dist', 'core', 'metrics', 'coref', 'score.js'))

const t0 = performance.now()
const gold = readConll(GOLD)
console.log(
  `read ${gold.length} documents, ${gold.reduce((n, d) => n + d.clusters.flat().length, 0)} mentions: ${((performance.now() - t0) / 1000).toFixed(2)} s`,
)
const cases = {
  self: gold,
  'one chain per document': gold.map((d) => ({...d, clusters: [d.clusters.flat()]})),
  'all singletons': gold.map((d) => ({...d, clusters: d.clusters.flat().map((m) => [m])})),
}
for (const [name, pred] of Object.entries(cases)) {
  const t = performance.now()
  const r = scoreCoref(gold, pred)
  console.log(`${name.padEnd(24)} CoNLL F1 ${(100 * conllF1(r)).toFixed(2)}  scored in ${((performance.now() - t) / 1000).toFixed(2)} s`)
}
const t1 = performance.now()
const p = spawnSync(process.execPath, [join(ROOT, 'bin', 'run.js'), 'eval', 'coref', '--gold', GOLD, '--pred', GOLD, '--json'], {encoding: 'utf8'})
console.log(`node bin/run.js eval coref (gold against itself): exit ${p.status}, ${((performance.now() - t1) / 1000).toFixed(2)} s wall`)
