#!/usr/bin/env node
// Throughput of the data pipeline, over dist/ as a user runs it (bin/run.js processes and a shell pipe):
//   npx tsc -p tsconfig.build.json && node bench/pipeline.mjs [--mb 100] [--blocks 200000] [--only pipeline|mask]
//
// pipeline: `span tokenize | span block | span mask > /dev/null` on WikiText-2 valid (from
//   ../shared/data) repeated to --mb MB in bench/out/ (git-ignored); prints MB/s of raw text
//   (wall clock) and, per stage, CPU seconds, the MB/s that CPU time allows, and peak RSS.
// mask: `span mask FILE > /dev/null` on a synthetic stream of --blocks blocks of 128–512 ids
//   (seeded, ids uniform over the vocabulary); prints records/s and MB/s of block JSON.
// Peak RSS and CPU times come from GNU time (/usr/bin/time -o); without it those columns say n/a.
// On a shared machine the CPU figures are the steadier ones; three stages need three free cores.
import {execFileSync, spawnSync} from 'node:child_process'
import {closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bench', 'out')
const TEXT = join(root, '..', 'shared', 'data', 'wikitext', 'wikitext-2.valid.txt')
const VOCAB = process.env.BENCH_VOCAB ?? join(root, '..', 'shared', 'data', 'vocab', 'bert-base-cased.txt')
const RUN = join(root, 'bin', 'run.js')
const MB = 1 << 20
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null

function args() {
  const a = process.argv.slice(2)
  const get = (k, d) => (a.includes(k) ? a[a.indexOf(k) + 1] : d)
  return {mb: Number(get('--mb', '100')), blocks: Number(get('--blocks', '200000')), only: get('--only', null)}
}

/** WikiText-2 valid repeated to `mb` MB (whole copies, then a cut at a line end). */
function corpus(mb) {
  const path = join(out, `wiki-${mb}MB.txt`)
  if (existsSync(path) && statSync(path).size >= mb * MB * 0.99) return path
  const text = readFileSync(TEXT)
  const fd = openSync(path, 'w')
  let size = 0
  while (size + text.length <= mb * MB) size += writeSync(fd, text)
  const rest = text.subarray(0, text.lastIndexOf(10, mb * MB - size) + 1)
  size += writeSync(fd, rest)
  closeSync(fd)
  return path
}

/** A stage of a shell pipe, timed by GNU time into its own file. */
function timed(name, cmd) {
  return TIME ? `${TIME} -o ${join(out, `${name}.time`)} -f '%M %U %S' ${cmd}` : cmd
}

/** Peak RSS (MB) and CPU seconds of a timed stage. */
function usage(name) {
  const path = join(out, `${name}.time`)
  if (!TIME || !existsSync(path)) return {rss: NaN, cpu: NaN}
  const [kb, user, sys] = readFileSync(path, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  rmSync(path)
  return {rss: kb / 1024, cpu: user + sys}
}

function sh(script) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${script}`], {cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8'})
  const secs = Number(process.hrtime.bigint() - t0) / 1e9
  if (r.status !== 0) throw new Error(`failed (${r.status}): ${script}\n${r.stderr}`)
  return secs
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a')

function pipeline(mb) {
  if (!existsSync(join(root, 'dist', 'commands', 'tokenize.js'))) {
    console.log('pipeline: skipped, dist/commands/tokenize.js is not built (span tokenize has not landed)')
    return
  }
  const file = corpus(mb)
  const bytes = statSync(file).size
  const stages = [
    ['tokenize', `node ${RUN} tokenize --vocab ${VOCAB} --doc-start '^ = [^=]' ${file}`],
    ['block', `node ${RUN} block --len 512`],
    ['mask', `node ${RUN} mask --seed 1`],
  ]
  const secs = sh(stages.map(([n, c]) => timed(n, c)).join(' | ') + ' > /dev/null')
  console.log(`pipeline tokenize | block | mask: ${fmt(bytes / MB)} MB of raw text in ${fmt(secs, 2)} s = ${fmt(bytes / MB / secs)} MB/s`)
  for (const [name] of stages) {
    const u = usage(name)
    console.log(`  ${name.padEnd(8)} cpu ${fmt(u.cpu, 2)} s (${fmt(bytes / MB / u.cpu)} MB/s of raw text per cpu-second)  peak RSS ${fmt(u.rss, 0)} MB`)
  }
}

/** A seeded stream of `n` blocks of 128–512 ids (a header first), like `span block` writes. */
function syntheticBlocks(n) {
  const path = join(out, `blocks-${n}.ndjson`)
  if (existsSync(path)) return path
  const script = `
    import {writeSync, openSync, closeSync} from 'node:fs'
    const {Rng} = await import(${JSON.stringify(join(root, 'dist', 'core', 'data', 'rng.js'))})
    const {loadVocab} = await import(${JSON.stringify(join(root, 'dist', 'core', 'text', 'vocab.js'))})
    const vocab = loadVocab(${JSON.stringify(VOCAB)})
    const rng = new Rng(1)
    const fd = openSync(${JSON.stringify(path)}, 'w')
    writeSync(fd, JSON.stringify({span: 'header', kind: 'blocks', vocab: vocab.info, cased: vocab.cased, special: vocab.special, history: []}) + '\\n')
    let buf = ''
    for (let b = 0; b < ${n}; b++) {
      const ids = [vocab.special.cls]
      for (let i = 128 + rng.int(385) - 2; i > 0; i--) ids.push(999 + rng.int(vocab.tokens.length - 999))
      ids.push(vocab.special.sep)
      buf += '{"doc":' + (b >> 4) + ',"ids":[' + ids.join(',') + ']}\\n'
      if (buf.length > 1 << 22) { writeSync(fd, buf); buf = '' }
    }
    writeSync(fd, buf)
    closeSync(fd)`
  execFileSync('node', ['--input-type=module', '-e', script], {stdio: 'inherit'})
  return path
}

function maskAlone(n) {
  const file = syntheticBlocks(n)
  const bytes = statSync(file).size
  for (const scheme of ['span', 'subword']) {
    const secs = sh(`${timed('mask', `node ${RUN} mask --scheme ${scheme} --seed 1 ${file}`)} > /dev/null`)
    const u = usage('mask')
    console.log(
      `mask --scheme ${scheme} alone: ${n} blocks, ${fmt(bytes / MB)} MB of block JSON in ${fmt(secs, 2)} s = ` +
        `${fmt(n / secs / 1000)}k records/s, ${fmt(bytes / MB / secs)} MB/s (cpu ${fmt(u.cpu, 2)} s: ${fmt(bytes / MB / u.cpu)} MB/s); peak RSS ${fmt(u.rss, 0)} MB`,
    )
  }
}

const opts = args()
mkdirSync(out, {recursive: true})
if (opts.only !== 'mask') pipeline(opts.mb)
if (opts.only !== 'pipeline') maskAlone(opts.blocks)
