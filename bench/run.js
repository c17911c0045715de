#!/usr/bin/env node
// `npm run bench [-- NAME ...]`: runs every bench/*.mjs (or the named ones) one after another,
// each in its own process so that peak-memory figures are its own. Benchmarks print figures;
// they assert nothing (speed targets are read from their output, never from timed tests).
import {spawnSync} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const all = readdirSync(here).filter((f) => f.endsWith('.mjs')).sort()
const chosen = wanted.length ? all.filter((f) => wanted.some((w) => f.startsWith(w))) : all
if (chosen.length === 0) {
  console.error(`no benchmark matches ${wanted.join(' ')}; have: ${all.join(' ')}`)
  process.exit(2)
}
let failed = 0
for (const file of chosen) {
  console.log(`\n## ${file}`)
  const r = spawnSync(process.execPath, [join(here, file)], {stdio: 'inherit'})
  if (r.status !== 0) failed++
}
process.exit(failed ? 1 : 0)
