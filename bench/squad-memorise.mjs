#!/usr/bin/env node
// Can the QA stack learn? Fine-tunes a model on a few hundred XQuAD questions until it has them
// by heart, through the commands a user runs, then scores them and some held-out questions:
//   npm run build && node bench/squad-memorise.mjs [--questions 300] [--heldout 200] [--epochs 30]
//     [--lr 2e-3] [--max-len 256] [--batch-size 16] [--preset tiny | --init CKPT] [--backend wasm]
// span finetune squad … → span predict squad … → span eval squad --json (on the training
// questions and on held-out ones: questions of later paragraphs, never seen in training).
// A train F1 above 90 shows that labels, the start/end head, the loss and decoding agree; the
// held-out F1 of a model trained from scratch on 300 questions stays low (it has no language).
// Reads ../shared/data/squad/xquad.en.json; the subsets are written to a temporary folder.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'

const root = join(import.meta.dirname, '..')
const {values: o} = parseArgs({options: {
  questions: {type: 'string', default: '300'}, heldout: {type: 'string', default: '200'}, epochs: {type: 'string', default: '30'},
  lr: {type: 'string', default: '2e-3'}, 'max-len': {type: 'string', default: '256'}, 'batch-size': {type: 'string', default: '16'},
  preset: {type: 'string', default: 'tiny'}, init: {type: 'string'}, backend: {type: 'string', default: 'wasm'},
  vocab: {type: 'string', default: join(root, '..', 'shared', 'data', 'vocab', 'bert-base-uncased.txt')},
  data: {type: 'string', default: join(root, '..', 'shared', 'data', 'squad', 'xquad.en.json')}, keep: {type: 'boolean', default: false},
}})

/** The first n questions (whole paragraphs kept together), and up to m questions of the paragraphs after them. */
function split(dataset, n, m) {
  const train = []
  const held = []
  let taken = 0
  let heldTaken = 0
  for (const article of dataset.data) {
    for (const p of article.paragraphs) {
      if (taken < n) {
        const qas = p.qas.slice(0, n - taken)
        taken += qas.length
        train.push({title: article.title, paragraphs: [{context: p.context, qas}]})
      } else if (heldTaken < m) {
        const qas = p.qas.slice(0, m - heldTaken)
        heldTaken += qas.length
        held.push({title: article.title, paragraphs: [{context: p.context, qas}]})
      }
    }
  }
  return {train: {version: dataset.version, data: train}, held: {version: dataset.version, data: held}, taken, heldTaken}
}

function span(args, stdoutFile) {
  const t0 = performance.now()
  const r = spawnSync('node', [join(root, 'bin', 'run.js'), ...args], {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28})
  if (r.status !== 0) throw new Error(`span ${args.slice(0, 2).join(' ')} failed with ${r.status}`)
  if (stdoutFile) writeFileSync(stdoutFile, r.stdout)
  return {stdout: r.stdout, seconds: (performance.now() - t0) / 1000}
}

const tmp = mkdtempSync(join(tmpdir(), 'span-squad-memorise-'))
try {
  const {train, held, taken, heldTaken} = split(JSON.parse(readFileSync(o.data, 'utf8')), Number(o.questions), Number(o.heldout))
  const trainFile = join(tmp, 'train.json')
  const heldFile = join(tmp, 'heldout.json')
  writeFileSync(trainFile, JSON.stringify(train))
  writeFileSync(heldFile, JSON.stringify(held))
  const ckpt = join(tmp, 'ckpt')
  const start = o.init ? ['--init', o.init] : ['--preset', o.preset, '--vocab', o.vocab]
  const settings = ['--max-len', o['max-len'], '--epochs', o.epochs, '--lr', o.lr, '--batch-size', o['batch-size'], '--backend', o.backend]
  const ft = span(['finetune', 'squad', ...start, '--train', trainFile, '--out', ckpt, ...settings, '--log-every', '20'], join(tmp, 'metrics.ndjson'))
  const losses = ft.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((r) => 'loss' in r)
  const score = (file, name) => {
    const pred = span(['predict', 'squad', '--model', ckpt, '--data', file, '-o', join(tmp, name), '--backend', o.backend])
    const ev = JSON.parse(span(['eval', 'squad', '--data', file, '--pred', join(tmp, name, 'predictions.json'), '--json']).stdout)
    return {exact: ev.exact_match, f1: ev.f1, predict_s: pred.seconds}
  }
  const tr = score(trainFile, 'train')
  const ho = score(heldFile, 'heldout')
  console.log(JSON.stringify({
    train_questions: taken, heldout_questions: heldTaken, start: o.init ?? `random ${o.preset}`,
    max_len: Number(o['max-len']), epochs: Number(o.epochs), lr: Number(o.lr), batch_size: Number(o['batch-size']), backend: o.backend,
    first_loss: losses[0]?.loss, last_loss: losses.at(-1)?.loss,
    train_exact: tr.exact, train_f1: tr.f1, heldout_exact: ho.exact, heldout_f1: ho.f1,
    finetune_s: Math.round(ft.seconds), predict_train_s: Math.round(tr.predict_s), predict_heldout_s: Math.round(ho.predict_s),
  }))
} finally {
  if (o.keep) console.error(`kept ${tmp}`)
  else rmSync(tmp, {recursive: true, force: true})
}
