#!/usr/bin/env node
// Questions per second of `span predict squad` with a BERT-base-sized model (random weights: the
// speed does not depend on them) at --max-len 384 on the best available backend:
//   npm run build && node bench/squad-predict.mjs [--questions 48] [--preset base] [--max-len 384]
//     [--batch-size 16] [--backend auto] [--data FILE] [--model DIR]
// The first questions of ../shared/data/squad/xquad.en.json (or --data); the BERT uncased
// vocabulary (or --model, a fine-tuned checkpoint with its own). Prints the wall time of the whole
// command (start-up and model loading included) and of the predictions alone (the command run a
// second time on one question is subtracted), and, where /usr/bin/time is, its CPU seconds and
// peak RSS: on a shared machine the CPU seconds are the figure that load does not stretch.
// Beside it, where a Python with torch and transformers is (SPAN_TORCH_PYTHON, else python3; --no-hf
// skips it), Hugging Face's way over the same checkpoint, questions and windows
// (bench/squad_predict_hf.py: run_qa.py's windows and utils_qa.py's postprocessing, since
// transformers 5 has no question-answering pipeline), 2 intra-op threads: its load and prediction
// seconds, CPU seconds and peak RSS. A speed figure only: its windows (the pipeline's overlap) and
// answer choice across windows (best score, not run_squad's maximal-context window) are not
// span's, so with a model that learned little (near-tied scores) the answers differ.
// The case of issue 24 (706 questions, a tiny model fine-tuned with the demo's 128-token windows):
//   node bench/squad-predict.mjs --preset tiny --questions 706 --max-len 128 \
//     --data ../shared/data/squad/squad-v2.0-dev-subset-normans-rhine.json
import {spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'
import {writeFilesAtomically} from '../dist/core/model/checkpoint.js'
import {presetConfig} from '../dist/core/model/config.js'
import {BertForQuestionAnswering, qaModelFiles} from '../dist/core/model/qa.js'
import {initBackend} from '../dist/core/engine/index.js'

const root = join(import.meta.dirname, '..')
const {values: o} = parseArgs({options: {
  questions: {type: 'string', default: '48'}, preset: {type: 'string', default: 'base'}, 'max-len': {type: 'string', default: '384'},
  'batch-size': {type: 'string', default: '16'}, backend: {type: 'string', default: 'auto'}, model: {type: 'string'},
  vocab: {type: 'string', default: join(root, '..', 'shared', 'data', 'vocab', 'bert-base-uncased.txt')},
  data: {type: 'string', default: join(root, '..', 'shared', 'data', 'squad', 'xquad.en.json')},
  'no-hf': {type: 'boolean', default: false},
}})

/** The first n questions of a SQuAD file, whole paragraphs (cut at n). */
function firstQuestions(dataset, n) {
  const data = []
  let taken = 0
  for (const article of dataset.data) {
    for (const p of article.paragraphs) {
      if (taken >= n) break
      const qas = p.qas.slice(0, n - taken)
      taken += qas.length
      data.push({title: article.title, paragraphs: [{context: p.context, qas}]})
    }
  }
  return {version: dataset.version, data}
}

const TIME = '/usr/bin/time'

/** One `span predict squad` process: wall seconds, and CPU seconds and peak RSS (MiB) where /usr/bin/time is. */
function predict(model, file, out) {
  const t0 = performance.now()
  const args = ['predict', 'squad', '--model', model, '--data', file, '-o', out, '--max-len', o['max-len'], '--batch-size', o['batch-size'], '--backend', o.backend]
  const stats = join(out + '.time')
  const timed = existsSync(TIME)
  const cmd = timed ? [TIME, ['-f', '%U %S %M', '-o', stats, process.execPath, join(root, 'bin', 'run.js'), ...args]] : [process.execPath, [join(root, 'bin', 'run.js'), ...args]]
  const r = spawnSync(cmd[0], cmd[1], {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']})
  if (r.status !== 0) throw new Error(`span predict squad failed with ${r.status}`)
  const wall = (performance.now() - t0) / 1000
  if (!timed) return {wall, cpu: null, rss: null}
  const [user, sys, kb] = readFileSync(stats, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  return {wall, cpu: user + sys, rss: Math.round(kb / 1024)}
}

/** Hugging Face's figure over the same files (bench/squad_predict_hf.py), or why there is none. */
function huggingFace(model, file, out, v2) {
  const py = process.env.SPAN_TORCH_PYTHON ?? 'python3'
  const args = [join(root, 'bench', 'squad_predict_hf.py'), model, file, out, '--max-len', o['max-len'], '--batch-size', o['batch-size'], '--threads', '2', ...(v2 ? ['--v2'] : [])]
  const stats = out + '.time'
  const r = existsSync(TIME) ? spawnSync(TIME, ['-f', '%U %S %M', '-o', stats, py, ...args], {encoding: 'utf8'}) : spawnSync(py, args, {encoding: 'utf8'})
  if (r.status !== 0) return {skipped: (r.stderr || String(r.error)).trim().split('\n').at(-1)}
  const fig = JSON.parse(r.stdout.trim().split('\n').at(-1))
  if (!existsSync(stats)) return fig
  const [user, sys, kb] = readFileSync(stats, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  return {...fig, cpu_s: Math.round((user + sys) * 10) / 10, peak_rss_mib: Math.round(kb / 1024)}
}

const tmp = mkdtempSync(join(tmpdir(), 'span-squad-predict-'))
try {
  const backend = await initBackend(o.backend)
  let ckpt = o.model
  if (!ckpt) {
    const vocabSize = readFileSync(o.vocab, 'utf8').trimEnd().split('\n').length
    const model = BertForQuestionAnswering.init(presetConfig(o.preset, vocabSize), 1)
    ckpt = join(tmp, 'model')
    await writeFilesAtomically(ckpt, await qaModelFiles(model))
    model.dispose()
    copyFileSync(o.vocab, join(ckpt, 'vocab.txt'))
  }
  const n = Number(o.questions)
  const full = join(tmp, 'data.json')
  const one = join(tmp, 'one.json')
  const dataset = JSON.parse(readFileSync(o.data, 'utf8'))
  writeFileSync(full, JSON.stringify(firstQuestions(dataset, n)))
  writeFileSync(one, JSON.stringify(firstQuestions(dataset, 1)))
  const base = predict(ckpt, one, join(tmp, 'out1'))
  const total = predict(ckpt, full, join(tmp, 'out'))
  const answered = Object.keys(JSON.parse(readFileSync(join(tmp, 'out', 'predictions.json'), 'utf8'))).length
  const v2 = dataset.version === 'v2.0' || dataset.data.some((a) => a.paragraphs.some((p) => p.qas.some((q) => q.is_impossible)))
  const files = existsSync(join(ckpt, 'config.json')) ? ckpt : join(ckpt, 'best') // a run directory: its best/
  const hf = o['no-hf'] ? {skipped: '--no-hf'} : huggingFace(files, full, join(tmp, 'hf.json'), v2)
  const r1 = (x) => (x === null ? null : Math.round(x * 10) / 10)
  console.log(JSON.stringify({
    model: o.model ?? o.preset, backend: backend.name, max_len: Number(o['max-len']), batch_size: Number(o['batch-size']), questions: n, answered,
    command_s: r1(total.wall), command_cpu_s: r1(total.cpu), one_question_command_s: r1(base.wall), one_question_cpu_s: r1(base.cpu), peak_rss_mib: total.rss,
    questions_per_s: Math.round((n / total.wall) * 100) / 100, questions_per_s_excluding_startup: Math.round(((n - 1) / (total.wall - base.wall)) * 100) / 100,
    hugging_face: hf,
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  }))
} finally {
  rmSync(tmp, {recursive: true, force: true})
}
