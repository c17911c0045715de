#!/usr/bin/env node
// `npm run bench [-- NAME ...]`: runs every bench/*.mjs (or the named ones) one after another,
// each in its own process so that peak-memory figures are its own. Benchmarks print figures;
// they assert nothing (speed targets are read from their output, never from timed tests).
// A NAME that is a benchmark's own name (`vs-torch`, or `vs-torch.mjs`) runs that one only; any
// other NAME runs every benchmark whose name starts with it (`coref` runs coref-*.mjs).
// `--list` prints the chosen files instead of running them.
import {spawnSync} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const list = args.includes('--list')
const wanted = args.filter((a) => a !== '--list')
const all = readdirSync(here).filter((f) => f.endsWith('.mjs')).sort()
/** The files NAME picks: its own file where there is one (vs-torch: not vs-torch-gpu), else those it begins. */
const picks = (w) => {
  const exact = all.filter((f) => f === w || f === `${w}.mjs`)
  return exact.length ? exact : all.filter((f) => f.startsWith(w))
}
const chosen = wanted.length ? all.filter((f) => wanted.some((w) => picks(w).includes(f))) : all
if (chosen.length === 0) {
  console.error(`no benchmark matches ${wanted.join(' ')}; have: ${all.join(' ')}`)
  process.exit(2)
}
if (list) {
  console.log(chosen.join('\n'))
  process.exit(0)
}
let failed = 0
for (const file of chosen) {
  console.log(`\n## ${file}`)
  const r = spawnSync(process.execPath, [join(here, file)], {stdio: 'inherit'})
  if (r.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
