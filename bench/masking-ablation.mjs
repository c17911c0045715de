#!/usr/bin/env node
/**
 * SpanBERT's masking ablation (§5 "Masking Schemes", Table 6) at small scale (issue 33): five
 * encoders differing only in how tokens are masked, then the same fine-tuning on the same dev tasks.
 *   1. one corpus: WikiText-2 (valid + test: the train split is not in ../shared/data), LitBank fold 0's
 *      train documents and CoNLL-2003 eng.train's sentences; no coref, NER, SST-2 or SQuAD dev or test
 *      text. `span tokenize` (the taggers' vocabulary) | `span tag` once with the NER tagger and once with
 *      the NP chunker (BENCH_NER, BENCH_NP: span finetune ner runs) | `span block --len 128`;
 *   2. `span pretrain` of a `tiny` encoder per scheme (subword, whole-word, entity, noun-phrase, span):
 *      same --max-steps BENCH_PT_STEPS, seed, batch 32, lr 1e-3, 10% warm-up, data order (same blocks;
 *      dynamic masking). Objectives: MLM only for all five (BENCH_OBJECTIVES), as Table 6 isolates the
 *      masking (the paper's rows add NSP; span's tagged blocks are single sequences, so no NSP here);
 *   3. each encoder fine-tuned with seeds BENCH_SEEDS on: CoNLL-2003 NER (eng.train → eng.testa, F1),
 *      SST-2 (train → dev, accuracy), LitBank coref fold 0 (train → dev, CoNLL F1), SQuAD 2.0 (the CS224n
 *      half minus its Normans article → the Normans/Rhine subset, F1); the best dev score of each run;
 *      and, as a control, the same fine-tuning from a randomly initialised `tiny` encoder (no pre-training);
 *   4. a table in Table 6's shape: mean ± half the range over seeds per cell, beside the paper's rows.
 * Work files: bench/out/masking-ablation/ (BENCH_OUT). Not a test.
 *
 *   npm run build && BENCH_NER=ner-run BENCH_NP=np-run node bench/masking-ablation.mjs
 * Settings (env); the defaults are the budget of docs/masking-ablation.md's run (one core of a loaded machine):
 * BENCH_PT_STEPS (100), BENCH_CORPUS_LINES (1500, lines of the corpus kept), BENCH_SEEDS (1,2),
 * BENCH_FT_EXAMPLES (ner=4096,sst2=8192,squad=1024: --max-train-examples of ner, sst2 and squad),
 * BENCH_FT_EPOCHS (1), BENCH_FT_EVAL_EVERY (ner=32,sst2=32,squad=0: --eval-every of ner, sst2 and squad,
 * each run scored on dev every N steps and at its end, the cell taking the best; 0: at the end only), BENCH_FT_LR (1e-3,
 * every task's --lr; '' for each task's own), BENCH_SQUAD_LEN (384, squad's --max-len; --doc-stride is
 * a third of it), BENCH_COREF_DOCS (2, coref's --max-train-examples), BENCH_COREF_FFNN (150, coref's
 * --ffnn-size; Joshi et al.'s 1000 is sized for base encoders), BENCH_THREADS (1), BENCH_TASKS
 * (ner,sst2,coref,squad: the order they run in, each over every scheme and seed, the table printed after
 * each), BENCH_SCHEMES (subword,whole-word,entity,noun-phrase,span,none: the rows fine-tuned, in this
 * order, `none` being a control row fine-tuned from a random initialisation; an instance sharing BENCH_OUT
 * may take a subset), BENCH_OBJECTIVES (mlm). BENCH_FT_EXAMPLES, BENCH_FT_EVAL_EVERY and BENCH_FT_LR take one value
 * for every task or task=value pairs (e.g. ner=4096,sst2=8192). The matrix products' precision is span's
 * own default (SPAN_NATIVE_PRECISION, else bf16 where the CPU has bf16 dot products), printed first.
 * Rerunning with the same settings reuses what is done (tagged blocks, encoders, fine-tuning results).
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, loadavg} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const env = (k, d) => process.env[k] ?? d
const DATA = env('SPAN_SHARED_DATA', join(ROOT, '..', 'shared', 'data'))
const OUT = env('BENCH_OUT', join(ROOT, 'bench', 'out', 'masking-ablation'))
/** A setting that is one value for every task, or `task=value,...` pairs (a task not named: `fallback`). */
const perTask = (value, fallback) => (task) => {
  if (!value.includes('=')) return value
  const pair = value.split(',').find((p) => p.split('=')[0] === task)
  return pair ? pair.slice(pair.indexOf('=') + 1) : fallback
}
const S = {
  ptSteps: Number(env('BENCH_PT_STEPS', '100')),
  lines: Number(env('BENCH_CORPUS_LINES', '1500')),
  seeds: env('BENCH_SEEDS', '1,2').split(','),
  examples: env('BENCH_FT_EXAMPLES', 'ner=4096,sst2=8192,squad=1024'),
  epochs: env('BENCH_FT_EPOCHS', '1'),
  evalEvery: env('BENCH_FT_EVAL_EVERY', 'ner=32,sst2=32,squad=0'),
  squadLen: Number(env('BENCH_SQUAD_LEN', '384')),
  corefDocs: Number(env('BENCH_COREF_DOCS', '2')),
  corefFfnn: env('BENCH_COREF_FFNN', '150'), // the coref head's --ffnn-size
  threads: env('BENCH_THREADS', '1'),
  schemes: env('BENCH_SCHEMES', 'subword,whole-word,entity,noun-phrase,span,none').split(','), // fine-tuned, in this order
  tasks: env('BENCH_TASKS', 'ner,sst2,coref,squad').split(','),
  ftLr: env('BENCH_FT_LR', '1e-3'),
  objectives: env('BENCH_OBJECTIVES', 'mlm'),
  precision: env('SPAN_NATIVE_PRECISION', ''), // '': span's default, which nativePrecision() reads from span doctor
}
/** The matrix products' precision every command runs at: SPAN_NATIVE_PRECISION, else the native default `span doctor` reports. */
function nativePrecision() {
  if (S.precision) return S.precision
  const r = spawnSync('node', [BIN, 'doctor'], {encoding: 'utf8'})
  return /default precision (\w+)/.exec(`${r.stdout}${r.stderr}`)?.[1] ?? 'unknown (span doctor did not say)'
}
const SCHEMES = [
  ['Subword Tokens', 'subword', 'ner'],
  ['Whole Words', 'whole-word', 'ner'],
  ['Named Entities', 'entity', 'ner'],
  ['Noun Phrases', 'noun-phrase', 'np'],
  ['Geometric Spans', 'span', 'ner'],
]
// the control row: the same fine-tuning from a randomly initialised `tiny` encoder (no pre-training)
const CONTROL = ['No pre-training', 'none']
// Table 6 (dev): SQuAD 2.0, NewsQA, TriviaQA, Coreference, MNLI-m, QNLI, GLUE avg
const PAPER = {
  'Subword Tokens': [83.8, 72.0, 76.3, 77.7, 86.7, 92.5, 83.2],
  'Whole Words': [84.3, 72.8, 77.1, 76.6, 86.3, 92.8, 82.9],
  'Named Entities': [84.8, 72.7, 78.7, 75.6, 86.0, 93.1, 83.2],
  'Noun Phrases': [85.0, 73.0, 77.7, 76.7, 86.5, 93.2, 83.5],
  'Geometric Spans': [85.4, 73.0, 78.8, 76.4, 87.0, 93.3, 83.4],
}
const cpuSeconds = () => {
  const u = process.resourceUsage() // this process; children are added from their own usage below
  return (u.userCPUTime + u.systemCPUTime) / 1e6
}
let childCpu = 0

/** `span ARGS`; exits on failure with the command's stderr. */
function span(args, {input, out} = {}) {
  const t0 = performance.now()
  const r = spawnSync(
    'bash',
    ['-c', `TIMEFORMAT='%U %S'; { time node ${BIN} ${args.map((a) => `'${a}'`).join(' ')} ${out ? `> '${out}'` : ''} ; } 2> >(cat >&2)`],
    {input, encoding: 'utf8', maxBuffer: 1 << 30},
  )
  if (r.status !== 0) {
    process.stderr.write(`span ${args.join(' ')} failed (${r.status}):\n${r.stderr}`)
    process.exit(1)
  }
  const times = r.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  const cpu = times.length === 2 && times.every(Number.isFinite) ? times[0] + times[1] : NaN // the command's user + system CPU
  if (Number.isFinite(cpu)) childCpu += cpu
  return {stdout: r.stdout, stderr: r.stderr, secs: (performance.now() - t0) / 1000, cpu}
}

/** The corpus text: documents separated by blank lines. */
async function corpus() {
  const {readConll} = await import('../dist/core/tasks/coref/conll.js')
  const {sentenceIds} = await import('../dist/core/tasks/coref/sentences.js')
  const lit = readConll(join(DATA, 'coref', 'litbank', 'tenfold_splits', '0', 'train.ids')).map((d) => {
    const sid = sentenceIds(d.words, d.sentence)
    const lines = []
    d.words.forEach((w, i) => (i === 0 || sid[i] !== sid[i - 1] ? lines.push([w]) : lines.at(-1).push(w)))
    return lines.map((l) => l.join(' ')).join('\n')
  })
  const wiki = ['valid', 'test'].flatMap((s) => readFileSync(join(DATA, 'wikitext', `wikitext-2.${s}.txt`), 'utf8').split(/\n(?= = [^=].* = \n)/))
  const conll = readFileSync(join(DATA, 'conll2003', 'eng.train'), 'utf8')
    .split(/\n-DOCSTART-[^\n]*\n/)
    .map((doc) =>
      doc
        .split(/\n\s*\n/)
        .map((s) =>
          s
            .split('\n')
            .map((l) => l.split(' ')[0])
            .filter((w) => w && w !== '-DOCSTART-')
            .join(' '),
        )
        .filter(Boolean)
        .join('\n'),
    )
  const clean = (t) =>
    t
      .replace(/ @(.)@ /g, '$1')
      .replace(/<unk>/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/^=.*=$/.test(l))
      .join('\n')
  const docs = [...wiki, ...lit, ...conll].map(clean).filter(Boolean)
  const kept = []
  let lines = 0
  for (let i = 0; lines < S.lines && i < docs.length; i++) {
    // interleave the three sources
    const d = docs[(i * 7919) % docs.length].split('\n').slice(0, S.lines - lines)
    kept.push(d.join('\n'))
    lines += d.length
  }
  return kept.join('\n\n') + '\n'
}

/** Steps 1–2: tagged blocks and one pre-trained encoder per scheme. */
async function pretrainAll(models) {
  const text = join(OUT, 'corpus.txt')
  const body = await corpus()
  const same = existsSync(text) && readFileSync(text, 'utf8') === body && existsSync(join(OUT, 'blocks-np.ndjson'))
  if (!same) tagAll(text, body, models)
  else console.log('corpus and its tagged blocks: reused from an earlier run of the same settings')
  const inspect = JSON.parse(span(['inspect', '--json', join(OUT, 'blocks-ner.ndjson')]).stdout)
  console.log(`corpus: ${inspect.records} blocks, ${inspect.tokens} tokens, ${inspect.tags?.tags ?? 0} entity tags`)
  for (const [, scheme, tags] of SCHEMES) {
    const run = join(OUT, `pt-${scheme}`)
    if (existsSync(join(run, `checkpoint-${S.ptSteps}`))) continue
    if (lockedByLive(run)) {
      console.log(`pretrain ${scheme}: running in process ${lockedByLive(run)} (another bench sharing BENCH_OUT); its fine-tuning waits for it`)
      continue
    }
    rmSync(run, {recursive: true, force: true}) // an interrupted run starts again
    const args = ['pretrain', join(OUT, `blocks-${tags}.ndjson`), '--preset', 'tiny', '--scheme', scheme, '--objectives', S.objectives]
    args.push('--max-steps', String(S.ptSteps), '--warmup', String(Math.max(1, Math.round(S.ptSteps / 10))), '--batch-size', '32', '--lr', '1e-3')
    args.push('--seed', '1', '--save-every', String(S.ptSteps), '--log-every', '10', '--threads', S.threads, '--out', run)
    const r = span(args)
    console.log(`pretrain ${scheme}: ${S.ptSteps} steps in ${r.secs.toFixed(0)} s (CPU ${r.cpu.toFixed(0)} s)`)
  }
}

/** The pid of the live process whose span lock holds `dir` (another bench instance's run), else 0. */
function lockedByLive(dir) {
  const lock = join(dir, '.span.lock')
  if (!existsSync(lock)) return 0
  const pid = Number(readFileSync(lock, 'utf8').trim())
  try {
    process.kill(pid, 0)
    return pid
  } catch {
    return 0
  }
}

/** Waits for an encoder that another process is still pre-training (lockedByLive), polling every 10 s. */
function awaitEncoder(init) {
  const run = dirname(init)
  while (!existsSync(join(init, 'config.json')) && lockedByLive(run)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000)
  if (!existsSync(join(init, 'config.json'))) throw new Error(`${init}: no pre-trained encoder (its run ended without it)`)
}

/** Step 1's tagging: the corpus tokenized, tagged by each tagger, cut into blocks. */
function tagAll(text, body, models) {
  writeFileSync(text, body)
  const vocab = join(models.ner, 'best', 'vocab.txt')
  const tokens = join(OUT, 'tokens.ndjson')
  span(['tokenize', '--vocab', vocab, '--cased', text], {out: tokens})
  for (const t of ['ner', 'np']) {
    const tagged = span(['tag', '--model', models[t], '--threads', S.threads, tokens], {out: join(OUT, `${t}.ndjson`)})
    console.log(
      `tag (${t}): ${tagged.stderr
        .trim()
        .split('\n')
        .find((l) => l.startsWith('span tag:'))} in ${tagged.secs.toFixed(0)} s`,
    )
    span(['block', '--len', '128', join(OUT, `${t}.ndjson`)], {out: join(OUT, `blocks-${t}.ndjson`)})
  }
}

/** One fine-tuning run: the best dev value of the task's metric. */
function finetune(task, init, seed) {
  const name = init ? init.split('/').at(-2) : 'pt-none' // init null: CONTROL's random initialisation
  const out = join(OUT, `ft-${task}-${name}-s${seed}`)
  const start = init ? ['--init', init] : ['--preset', 'tiny', '--vocab', join(models.ner, 'best', 'vocab.txt'), '--cased']
  const lrValue = perTask(S.ftLr, '')(task)
  const lr = lrValue ? ['--lr', lrValue] : [] // '': each task's own (BERT's 5e-5, coref's 2e-5)
  const examples = perTask(S.examples, '256')(task)
  const every = perTask(S.evalEvery, '0')(task)
  const common = [...start, '--seed', seed, '--epochs', S.epochs, '--threads', S.threads, ...lr, '--out', out]
  if (task !== 'coref' && Number(every) > 0) common.push('--eval-every', every) // coref: scored at its end only
  const sq = ['--max-len', String(S.squadLen), '--doc-stride', String(Math.round(S.squadLen / 3))]
  const c = join(DATA, 'conll2003')
  const lit = join(DATA, 'coref', 'litbank', 'tenfold_splits', '0')
  const argv = {
    ner: [['finetune', 'ner', '--train', join(c, 'eng.train'), '--dev', join(c, 'eng.testa'), ...common, '--max-train-examples', examples], 'f1'],
    sst2: [
      [
        'finetune',
        'glue',
        '--task',
        'SST-2',
        '--train',
        join(DATA, 'glue', 'SST-2', 'train.tsv'),
        '--dev',
        join(DATA, 'glue', 'SST-2', 'dev.tsv'),
        ...common,
        '--max-train-examples',
        examples,
      ],
      'acc',
    ],
    coref: [
      [
        'finetune',
        'coref',
        '--train',
        join(lit, 'train.ids'),
        '--dev',
        join(lit, 'dev.ids'),
        ...common,
        '--max-train-examples',
        String(S.corefDocs),
        '--ffnn-size',
        S.corefFfnn,
      ],
      'conll_f1',
    ],
    squad: [
      [
        'finetune',
        'squad',
        '--train',
        join(OUT, 'squad-train.json'),
        '--dev',
        join(DATA, 'squad', 'squad-v2.0-dev-subset-normans-rhine.json'),
        ...common,
        '--max-train-examples',
        examples,
        ...sq,
      ],
      'f1',
    ],
  }[task]
  const done = `${out}.json` // the run's result: a rerun of the bench skips it
  const key = JSON.stringify(
    task === 'coref'
      ? {epochs: S.epochs, corefDocs: S.corefDocs, ffnn: S.corefFfnn, lr: lrValue, precision: S.precision}
      : {examples, epochs: S.epochs, lr: lrValue, every, precision: S.precision, ...(task === 'squad' ? {len: S.squadLen} : {})},
  ) // what the run's result depends on besides its name
  if (existsSync(done) && JSON.parse(readFileSync(done, 'utf8')).key === key) return JSON.parse(readFileSync(done, 'utf8')).best
  if (lockedByLive(out)) {
    // another instance sharing BENCH_OUT runs it: wait for its result
    while (!existsSync(done) && lockedByLive(out)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000)
    if (existsSync(done) && JSON.parse(readFileSync(done, 'utf8')).key === key) return JSON.parse(readFileSync(done, 'utf8')).best
  }
  rmSync(out, {recursive: true, force: true}) // an interrupted run starts again
  const r = span(argv[0])
  const dev = r.stdout
    .split('\n')
    .filter((l) => l.includes('"split":"dev"'))
    .map((l) => JSON.parse(l))
  const best = Math.max(...dev.map((d) => d[argv[1]] ?? d.f1 ?? d.acc ?? NaN)) // spread-ok: one record per dev evaluation of a run
  const score = argv[1] === 'acc' && best <= 1 ? 100 * best : best
  writeFileSync(done, JSON.stringify({task, init: init ?? 'tiny, random', seed, key, best: score, secs: r.secs, cpu: r.cpu, evaluations: dev.length}) + '\n')
  console.log(`  ${task} ${name} seed ${seed}: ${score.toFixed(2)} in ${r.secs.toFixed(0)} s (CPU ${r.cpu.toFixed(0)} s, best of ${dev.length} evaluations)`)
  return score
}

/** SQuAD's training file: the CS224n half without the dev set's article. */
function taskFiles() {
  const sq = JSON.parse(readFileSync(join(DATA, 'squad', 'squad-v2.0-dev-cs224n-half.json'), 'utf8'))
  sq.data = sq.data.filter((a) => a.title !== 'Normans') // the dev set's article
  writeFileSync(join(OUT, 'squad-train.json'), JSON.stringify(sq))
}

const cell = (xs) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length
  return `${m.toFixed(1)} ±${((Math.max(...xs) - Math.min(...xs)) / 2).toFixed(1)}` // spread-ok: one score per seed
}

/** Table 6's shape: a row per scheme, a column per task done so far, the paper's dev numbers beside. */
function printTable(scores) {
  const tasks = S.tasks.filter((t) => Object.values(scores).some((row) => t in row))
  const head = ['scheme', ...tasks.map((t) => ({ner: 'NER F1', sst2: 'SST-2 acc', coref: 'Coref F1', squad: 'SQuAD2 F1'})[t])]
  console.log(`\n| ${head.join(' | ')} | paper: SQuAD 2.0 | NewsQA | TriviaQA | Coref | MNLI-m | QNLI | GLUE |`)
  console.log(`|${' --- |'.repeat(head.length + 7)}`)
  for (const [name, row] of Object.entries(scores))
    console.log(
      `| ${[name, ...tasks.map((t) => row[t] ?? '—')].join(' | ')} | ${(PAPER[name] ?? Array(7).fill(NaN)).map((x) => (Number.isNaN(x) ? '—' : x.toFixed(1))).join(' | ')} |`,
    )
}

const models = {ner: env('BENCH_NER', join(OUT, 'ner')), np: env('BENCH_NP', join(OUT, 'np'))}

async function main() {
  for (const m of Object.values(models))
    if (!existsSync(join(m, 'best', 'config.json')))
      throw new Error(`${m}: no span finetune ner run (set BENCH_NER / BENCH_NP; docs/algorithms.md#tagged-masking says how they were trained)`)
  mkdirSync(OUT, {recursive: true})
  const t0 = performance.now()
  const load0 = loadavg()[0]
  console.log(`masking ablation: ${JSON.stringify(S)}; precision ${nativePrecision()}; ${cpus().length} cores, load ${load0.toFixed(1)}`)
  await pretrainAll(models)
  taskFiles()
  // task by task (every scheme and seed), the table printed after each: a run cut short still has its finished columns
  const rows = [...SCHEMES, CONTROL].filter(([, id]) => S.schemes.includes(id)).sort(([, a], [, b]) => S.schemes.indexOf(a) - S.schemes.indexOf(b))
  const scores = Object.fromEntries(rows.map(([name]) => [name, {}]))
  for (const task of S.tasks) {
    for (const [name, scheme] of rows) {
      const init = scheme === 'none' ? null : join(OUT, `pt-${scheme}`, `checkpoint-${S.ptSteps}`)
      if (init) awaitEncoder(init)
      scores[name][task] = cell(S.seeds.map((seed) => finetune(task, init, seed)))
    }
    printTable(scores)
  }
  const wall = (performance.now() - t0) / 1000
  console.log(
    `\nwall ${wall.toFixed(0)} s, CPU ${(childCpu + cpuSeconds()).toFixed(0)} s (children and this script), load ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
  )
  console.log('cells: mean ±half the range over seeds of the best dev score; paper: Table 6 (dev, base size, 1.2M steps, NSP)')
}

await main()
