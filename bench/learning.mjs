#!/usr/bin/env node
// Is the learning real? Pre-trains the `tiny` preset on the fixtures (fixtures/corpus.txt →
// span tokenize → span block --len 128; the last --eval-blocks blocks held out) with dynamic
// span masking and prints the held-out curve (step, eval loss, MLM loss, MLM and SBO accuracy)
// beside the baseline a model without context could reach: the unigram entropy of the
// training tokens (nats; an MLM that predicts each masked token from corpus frequencies alone
// scores this cross-entropy on average). Not a test: it takes minutes.
//   npm run build && node bench/learning.mjs [--steps 120] [--batch 8] [--lr 2e-3] [--backend wasm]
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = join(root, 'bin', 'run.js')
const opt = {steps: 120, batch: 8, lr: 2e-3, backend: 'wasm', 'eval-blocks': 30, 'eval-every': 20, seed: 1}
const argv = process.argv.slice(2)
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i].replace(/^--/, '')
  if (!(k in opt)) throw new Error(`unknown option ${argv[i]}; have ${Object.keys(opt).join(', ')}`)
  opt[k] = typeof opt[k] === 'number' ? Number(argv[i + 1]) : argv[i + 1]
}

const dir = mkdtempSync(join(tmpdir(), 'span-learning-'))
const span = (args, input) => {
  const r = spawnSync(process.execPath, [bin, ...args], {input, encoding: 'utf8', maxBuffer: 1 << 30})
  if (r.status !== 0) throw new Error(`span ${args[0]} failed: ${r.stderr}`)
  return r.stdout
}
const tokens = span(['tokenize', '--vocab', join(root, 'fixtures', 'vocab.txt'), join(root, 'fixtures', 'corpus.txt')])
const [header, ...blocks] = span(['block', '--len', '128'], tokens).trimEnd().split('\n')
const cut = blocks.length - opt['eval-blocks']
const train = join(dir, 'train.ndjson')
const dev = join(dir, 'dev.ndjson')
writeFileSync(train, [header, ...blocks.slice(0, cut)].join('\n') + '\n')
writeFileSync(dev, [header, ...blocks.slice(cut)].join('\n') + '\n')

/** Entropy (nats) of the non-special training tokens: the context-free baseline. */
function unigramEntropy(lines, special) {
  const counts = new Map()
  let n = 0
  for (const l of lines) for (const id of JSON.parse(l).ids) {
    if (special.has(id)) continue
    counts.set(id, (counts.get(id) ?? 0) + 1)
    n++
  }
  let h = 0
  for (const c of counts.values()) h -= (c / n) * Math.log(c / n)
  return {h, n, types: counts.size}
}
/** Cross-entropy (nats) of the held-out tokens under the training unigram counts, add-one smoothed. */
function heldOutUnigram(trainLines, devLines, special, V) {
  const counts = new Float64Array(V)
  let n = 0
  for (const l of trainLines) for (const id of JSON.parse(l).ids) if (!special.has(id)) {
    counts[id]++
    n++
  }
  let ce = 0
  let m = 0
  for (const l of devLines) for (const id of JSON.parse(l).ids) if (!special.has(id)) {
    ce -= Math.log((counts[id] + 1) / (n + V - special.size))
    m++
  }
  return ce / m
}
const special = new Set(Object.values(JSON.parse(header).special))
const V = JSON.parse(header).vocab.size
const base = unigramEntropy(blocks.slice(0, cut), special)
const heldOut = heldOutUnigram(blocks.slice(0, cut), blocks.slice(cut), special, V)
console.log(`data: ${cut} training blocks (${base.n} tokens, ${base.types} types), ${opt['eval-blocks']} held out; ` +
  `unigram entropy baseline ${base.h.toFixed(3)} nats (held-out tokens under the training unigram, add-one: ` +
  `${heldOut.toFixed(3)}); uniform ${Math.log(V).toFixed(3)} nats`)

const args = ['pretrain', train, '--preset', 'tiny', '--backend', opt.backend, '--max-steps', String(opt.steps), '--batch-size', String(opt.batch),
  '--lr', String(opt.lr), '--warmup', String(Math.ceil(opt.steps / 10)), '--eval', dev, '--eval-every', String(opt['eval-every']),
  '--log-every', String(opt['eval-every']), '--save-every', String(opt.steps), '--seed', String(opt.seed), '--out', join(dir, 'ckpt')]
console.log(`$ span ${args.join(' ')}`)
console.log('step  train_loss  eval_loss  eval_mlm_loss  eval_sbo_loss  eval_mlm_acc  eval_sbo_acc  tokens/s  elapsed_s')
const t0 = performance.now()
const child = spawn(process.execPath, [bin, ...args], {stdio: ['ignore', 'pipe', 'inherit']})
let lastTrain = null
const f = (x, d = 3) => (typeof x === 'number' ? x.toFixed(d) : '-').padStart(9)
for await (const line of createInterface({input: child.stdout})) {
  const r = JSON.parse(line)
  if (r.split === 'eval') {
    console.log(`${String(r.step).padStart(4)} ${f(lastTrain?.loss)}  ${f(r.loss)}  ${f(r.mlm_loss)}      ${f(r.sbo_loss)}      ${f(r.mlm_acc)}     ${f(r.sbo_acc)}  ` +
      `${f(lastTrain?.tokens_per_s, 0)}  ${f((performance.now() - t0) / 1000, 0)}`)
  } else if (r.loss !== undefined) lastTrain = r
}
const code = await new Promise((resolve) => child.on('close', resolve))
console.log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s (exit ${code}); unigram baseline ${base.h.toFixed(3)} nats; files in ${dir}`)
