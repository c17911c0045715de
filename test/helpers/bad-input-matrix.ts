// The bad-input matrix (issue 13): every command that reads or writes files × (missing file,
// directory, unreadable file, bad output path, full disk) gives one `span CMD:` line on stderr,
// exit 1 (a data/filesystem error), nothing on stdout, and no output file or temporary left.
// "Unreadable": this suite runs as root, where chmod 000 does not stop a read, so the unreadable
// input is /proc/self/mem, whose read fails with EIO. "Full disk": a 64 KB tmpfs filled up (the
// case is skipped where this process may not mount). The model commands (encode, fill, export,
// finetune/predict of glue, squad and ner) read checkpoints (tiny, one step) made once per test
// run and copied into each matrix file's folder; eval prints its scores, so only its input faults
// apply. Coref's data errors (brackets, columns, a missing #end document) are in
// tasks-bad-input.test.ts. Usage errors (exit 2) are in bad-input-matrix-36.test.ts.
//
// This module is the case table and the runner; the test files take disjoint command families of
// it (FAMILIES: bad-input-matrix-FAMILY.test.ts), so vitest's two workers share the matrix instead
// of one file setting the suite's tail. Two processes at a time per file.
import {spawn, spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {pool, spanAsync} from './spawn.js'
import {litbankDoc} from '../core/tasks/coref-helpers.js'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
export const BIN = join(root, 'bin', 'run.js')
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm --max-steps 1'
const FT = '--init pre/checkpoint-1 --batch-size 2 --epochs 1 --stop-at 1 --backend wasm'
const MAXLEN: Record<string, string> = {tacred: '--max-len 32', nli: '--max-len 32', swag: '--max-len 32', mrqa: '--max-len 48 --max-query-len 16'}
const SQUAD = join(root, 'fixtures', 'squad-demo', 'dev.json')
const NER =
  '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n. . O O\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n'
const REL = (relation: string) => JSON.stringify({token: ['Bill', 'works', 'for', 'Acme'], subj_start: 0, subj_end: 0, obj_start: 3, obj_end: 3, relation})
const NLI = (label: string) => JSON.stringify({premise: 'the quick brown fox', hypothesis: 'a fast fox', label})
const MRQA_QA = {qid: 'q1', question: 'who won?', answers: ['Denver Broncos'], detected_answers: [{text: 'Denver Broncos', char_spans: [[0, 13]]}]}
const MRQA = `{"header": {"dataset": "x"}}\n${JSON.stringify({context: 'Denver Broncos won the game', qas: [MRQA_QA]})}\n`
const SWAG = 'sent1,sent2,ending0,ending1,ending2,ending3,label\nthe man,he,runs,sits,eats,sleeps,0\na dog,it,barks,flies,swims,reads,1\n'
const MRPC = ['Quality\t#1 ID\t#2 ID\t#1 String\t#2 String', '1\t1\t2\tthe quick brown fox\tthe fast brown fox', '0\t3\t4\tthe lazy dog\ta cat sat']

/**
 * Each command: its good input, and its argument line with IN and OUT to fill in. `zero`: its other
 * file flags, each given /dev/zero in turn (issue 25); `dirOut`: OUT is a folder; `quiet`: nothing
 * on stdout when OUT is given (the rest write their data, or their metrics, there).
 */
export interface Cmd {
  input: string
  args: string
  noOutput?: boolean
  zero?: string[]
  dirOut?: boolean
  quiet?: boolean
}
export const COMMANDS: Record<string, Cmd> = {
  tokenize: {input: 'text.txt', args: 'tokenize IN -o OUT', zero: ['--vocab']},
  vocab: {input: 'text.txt', args: 'vocab IN --size 40 -o OUT'},
  block: {input: 'tokens.ndjson', args: 'block IN --len 16 -o OUT'},
  mask: {input: 'blocks.ndjson', args: 'mask IN -o OUT', zero: ['--unigram']},
  'segment-ngrams': {input: 'text.txt', args: 'segment-ngrams --build IN --min-count 1 -o OUT'},
  inspect: {input: 'blocks.ndjson', args: 'inspect IN -o OUT'},
  pretrain: {input: 'blocks.ndjson', args: `pretrain IN ${TINY} --out OUT`, zero: ['--config'], dirOut: true},
  encode: {input: 'tokens.ndjson', args: 'encode IN --model pre/checkpoint-1 --backend wasm --pool cls -o OUT'},
  fill: {input: 'masked.txt', args: 'fill IN --model pre/checkpoint-1 --backend wasm -o OUT'},
  export: {input: 'pre/checkpoint-1', args: 'export --model IN --format safetensors --to OUT', dirOut: true, quiet: true},
  'finetune glue': {input: 'mrpc.tsv', args: `finetune glue --task mrpc --train IN ${FT} --max-len 32 --out OUT`, dirOut: true},
  'finetune squad': {input: SQUAD, args: `finetune squad --train IN ${FT} --max-len 96 --max-query-len 16 --out OUT`, dirOut: true},
  'finetune ner': {input: 'ner.txt', args: `finetune ner --train IN ${FT} --max-len 32 --out OUT`, dirOut: true},
  'predict glue': {input: 'mrpc.tsv', args: 'predict glue --model ft-glue/checkpoint-1 --data IN --backend wasm -o OUT'},
  'predict squad': {input: SQUAD, args: 'predict squad --model ft-squad/checkpoint-1 --data IN --backend wasm -o OUT', dirOut: true, quiet: true},
  'predict ner': {input: 'ner.txt', args: 'predict ner --model ft-ner/checkpoint-1 --data IN --backend wasm -o OUT'},
  tag: {input: 'tokens.ndjson', args: 'tag IN --model ft-ner/checkpoint-1 --backend wasm -o OUT'},
  'eval glue': {input: 'glue-pred.tsv', args: 'eval glue --task mrpc --gold mrpc.tsv --pred IN', noOutput: true, zero: ['--gold']},
  'eval squad': {input: 'squad-pred.json', args: `eval squad --data ${SQUAD} --pred IN`, noOutput: true, zero: ['--data']},
  'eval ner': {input: 'ner-pred.txt', args: 'eval ner --gold ner.txt --pred IN', noOutput: true, zero: ['--gold']},
  plot: {input: 'metrics.ndjson', args: 'plot IN --svg OUT'},
  ...taskCommands(),
  'finetune coref': {input: 'coref.conll', args: `finetune coref --train IN ${FT} --max-segment-len 32 --ffnn-size 8 --out OUT`, dirOut: true},
  'predict coref': {input: 'coref.conll', args: 'predict coref --model ft-coref/checkpoint-1 --data IN --backend wasm -o OUT'},
  'eval coref': {input: 'coref.conll', args: 'eval coref --gold coref.conll --pred IN', noOutput: true, zero: ['--gold']},
  'eval compare': {input: 'nli-pred.txt', args: 'eval compare --task nli --gold nli.jsonl --a IN --b nli-pred.txt', noOutput: true, zero: ['--gold', '--b']},
}

/** finetune, predict and eval of the tasks with a file of their own (tacred, nli, swag, mrqa). */
function taskCommands(): Record<string, Cmd> {
  const data: Record<string, [string, string]> = {
    tacred: ['rel.jsonl', 'tacred-pred.txt'],
    nli: ['nli.jsonl', 'nli-pred.txt'],
    swag: ['swag.csv', 'swag-pred.txt'],
    mrqa: ['mrqa.jsonl', 'mrqa-pred.json'],
  }
  const out: Record<string, Cmd> = {}
  for (const [task, [gold, pred]] of Object.entries(data)) {
    out[`finetune ${task}`] = {input: gold, args: `finetune ${task} --train IN ${FT} ${MAXLEN[task]} --out OUT`, dirOut: true}
    const folder = task === 'mrqa' // predict mrqa writes predictions.json into a folder
    out[`predict ${task}`] = {
      input: gold,
      args: `predict ${task} --model ft-${task}/checkpoint-1 --data IN --backend wasm -o OUT`,
      dirOut: folder,
      quiet: folder,
    }
    const goldFlag = `--${task === 'mrqa' ? 'data' : 'gold'}`
    out[`eval ${task}`] = {input: pred, args: `eval ${task} ${goldFlag} ${gold} --pred IN`, noOutput: true, zero: [goldFlag]}
  }
  return out
}

const MODEL = ['pretrain', 'encode', 'fill', 'export', 'tag']

/**
 * The matrix's command families, one test file each (bad-input-matrix-FAMILY.test.ts), together
 * every command once (bad-input-matrix-36.test.ts checks): data, the commands that read no model
 * (text, data, plot and every eval); model, pretrain and the commands that read its checkpoints;
 * finetune and predict, those of every task.
 */
export const FAMILIES: Record<string, (cmd: string) => boolean> = {
  data: (cmd) => !MODEL.includes(cmd) && !/^(finetune|predict) /.test(cmd),
  model: (cmd) => MODEL.includes(cmd),
  finetune: (cmd) => cmd.startsWith('finetune '),
  predict: (cmd) => cmd.startsWith('predict '),
}

/** The commands of a family, in the table's order. */
export const familyCommands = (family: string): Record<string, Cmd> => Object.fromEntries(Object.entries(COMMANDS).filter(([cmd]) => FAMILIES[family](cmd)))

/** The good inputs every command reads, written into `dir` (one tokenize process). */
function writeInputs(dir: string): void {
  writeFileSync(join(dir, 'text.txt'), Array.from({length: 300}, (_, i) => `the quick brown fox ${i} jumps over the lazy dog.`).join('\n') + '\n')
  expect(spawnSync('node', [BIN, 'tokenize', 'text.txt', '-o', 'tokens.ndjson'], {cwd: dir}).status).toBe(0)
  writeBlocks(join(dir, 'blocks.ndjson'), 300, 1)
  writeFileSync(join(dir, 'masked.txt'), 'the [MASK] brown fox\n')
  writeFileSync(join(dir, 'mrpc.tsv'), MRPC.join('\n') + '\n')
  writeFileSync(join(dir, 'ner.txt'), NER)
  writeFileSync(join(dir, 'glue-pred.tsv'), 'index\tprediction\n0\t1\n1\t0\n')
  writeFileSync(join(dir, 'rel.jsonl'), `${REL('r')}\n${REL('no_relation')}\n`)
  writeFileSync(join(dir, 'tacred-pred.txt'), 'r\nno_relation\n')
  writeFileSync(join(dir, 'nli.jsonl'), `${NLI('entailment')}\n${NLI('neutral')}\n`)
  writeFileSync(join(dir, 'nli-pred.txt'), 'entailment\ncontradiction\n')
  writeFileSync(join(dir, 'swag.csv'), SWAG)
  writeFileSync(join(dir, 'swag-pred.txt'), '0\n1\n')
  writeFileSync(join(dir, 'mrqa.jsonl'), MRQA)
  writeFileSync(join(dir, 'mrqa-pred.json'), '{"q1": "Denver Broncos"}\n')
  writeFileSync(join(dir, 'coref.conll'), litbankDoc('a', 2) + litbankDoc('b', 1))
  writeFileSync(join(dir, 'metrics.ndjson'), '{"step":1,"loss":2}\n{"step":2,"loss":1}\n')
  writeFileSync(join(dir, 'ner-pred.txt'), NER.replace(/ (\S+)\n/g, ' $1 $1\n')) // GOLD PRED columns: a perfect tagger
  const sq = JSON.parse(readFileSync(SQUAD, 'utf8')) as {data: {paragraphs: {qas: {id: string}[]}[]}[]}
  writeFileSync(
    join(dir, 'squad-pred.json'),
    JSON.stringify(Object.fromEntries(sq.data.flatMap((a) => a.paragraphs.flatMap((p) => p.qas.map((q) => [q.id, 'the']))))),
  )
}

/** The checkpoints the model commands read, trained in `dir` on its inputs: a pre-trained one, and one fine-tuned per task. */
function trainCheckpoints(dir: string): void {
  const sh = (line: string) => {
    const r = spawnSync('bash', ['-c', line], {cwd: dir, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
  }
  sh(`node ${BIN} pretrain blocks.ndjson ${TINY} --out pre > /dev/null`)
  sh(`node ${BIN} finetune glue --task mrpc --train mrpc.tsv ${FT} --max-len 32 --out ft-glue > /dev/null`)
  sh(`node ${BIN} finetune squad --train ${SQUAD} ${FT} --max-len 96 --max-query-len 16 --out ft-squad > /dev/null`)
  sh(`node ${BIN} finetune ner --train ner.txt ${FT} --max-len 32 --out ft-ner > /dev/null`)
  for (const [task, file] of [
    ['tacred', 'rel.jsonl'],
    ['nli', 'nli.jsonl'],
    ['swag', 'swag.csv'],
    ['mrqa', 'mrqa.jsonl'],
  ])
    sh(`node ${BIN} finetune ${task} --train ${file} ${FT} ${MAXLEN[task]} --out ft-${task} > /dev/null`)
  sh(`node ${BIN} finetune coref --train coref.conll ${FT} --max-segment-len 32 --ffnn-size 8 --out ft-coref > /dev/null`)
  for (const ck of ['pre', 'ft-glue', 'ft-squad', 'ft-ner', 'ft-tacred', 'ft-nli', 'ft-swag', 'ft-mrqa', 'ft-coref'])
    expect(existsSync(join(dir, ck, 'checkpoint-1')), ck).toBe(true)
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * The inputs and checkpoints, made once per test run and shared by the matrix files: the first
 * file to ask builds them (mkdir is the lock) into `fixture/`, renamed into place when whole; the
 * others wait for it (or for the builder's `failed` note). Shared only under the run's own
 * temporary root (test/helpers/tmp-root.ts), never across runs: elsewhere each file builds its own.
 */
function sharedFixture(): string {
  const perRun = basename(tmpdir()).startsWith('span-test-')
  const base = perRun ? join(tmpdir(), 'span-matrix-fixture') : mkdtempSync(join(tmpdir(), 'span-matrix-fixture-'))
  const ready = join(base, 'fixture')
  const failed = join(base, 'failed')
  try {
    mkdirSync(base)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    for (let waited = 0; !existsSync(ready); waited += 500) {
      if (existsSync(failed)) throw new Error(`the matrix's checkpoints failed in another file: ${readFileSync(failed, 'utf8')}`)
      if (waited > 280_000) throw new Error(`the matrix's checkpoints: still not made in ${base} after ${waited / 1000} s`)
      sleep(500)
    }
    return ready
  }
  const work = join(base, 'building')
  mkdirSync(work)
  try {
    writeInputs(work)
    trainCheckpoints(work)
  } catch (err) {
    writeFileSync(failed, String(err))
    throw err
  }
  renameSync(work, ready)
  return ready
}

/** A matrix file's own folder: the shared inputs and checkpoints copied in, and its own full 64 KB tmpfs (null where it may not mount). */
export function matrixFolder(mount = true): {tmp: string; full: string | null} {
  const fixture = sharedFixture()
  const tmp = mkdtempSync(join(tmpdir(), 'span-matrix-'))
  cpSync(fixture, tmp, {recursive: true})
  mkdirSync(join(tmp, 'adir'))
  const dir = join(tmp, 'full')
  mkdirSync(dir)
  if (!mount || spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status !== 0) return {tmp, full: null}
  spawnSync('bash', ['-c', `cat /dev/zero > ${dir}/filler`])
  return {tmp, full: dir}
}

/** The faults of issue 13; "full disk" only where the tmpfs mounted. */
const faultCases = (full: string | null): Record<string, (c: {input: string; noOutput?: boolean}) => {input: string; out: string} | null> => ({
  'missing file': () => ({input: 'no-such-file', out: 'o1'}),
  directory: () => ({input: 'adir', out: 'o2'}),
  'unreadable file': () => ({input: '/proc/self/mem', out: 'o3'}),
  'bad output path': (c) => ({input: c.input, out: 'text.txt/sub/x'}), // ENOTDIR: a file where a directory should be
  'full disk': (c) => (full ? {input: c.input, out: join(full, 'x')} : null),
})

/**
 * The matrix of one command family (FAMILIES), in a folder of its own (matrixFolder, made before
 * its tests; its tmpfs unmounted after): issue 13's faults, then issue 25's.
 */
export function matrixSuite(family: string): void {
  const cmds = familyCommands(family)
  let tmp = ''
  let full: string | null = null
  beforeAll(() => {
    ;({tmp, full} = matrixFolder())
  })
  afterAll(() => {
    if (full) spawnSync('umount', [full])
  })
  describe(`the bad-input matrix: the ${family} commands (${Object.keys(cmds).join(', ')})`, () => {
    it('every command × every fault: one `span CMD:` line, exit 1, no output left behind', async () => {
      await issue13(cmds, tmp, full)
    }, 900_000) // 167 processes for all families together (130-180 s a family on one loaded core)
    it('every command × the faults of issue 25: full stdout, /dev/zero as each file, a symbolic-link output, an output that is an input', async () => {
      await issue25(cmds, tmp, full)
    }, 1_800_000)
  })
}

/** Issue 13: every command of `cmds` × every fault: one `span CMD:` line, exit 1, no output left behind. */
async function issue13(cmds: Record<string, Cmd>, tmp: string, full: string | null): Promise<void> {
  const cases = faultCases(full)
  const jobs: {name: string; job: () => Promise<{code: number; stdout: string; stderr: string}>}[] = []
  for (const [cmd, c] of Object.entries(cmds)) {
    for (const [fault, make] of Object.entries(cases)) {
      const io = make(c)
      if (!io || (c.noOutput && /output|disk/.test(fault))) continue // eval prints its scores: no output path to fault
      const out = io.out.startsWith('/') ? io.out : `${io.out}-${cmd}`
      const args = c.args.replace('IN', io.input).replace('OUT', out.replace(' ', '-')).split(' ')
      jobs.push({name: `${cmd} × ${fault}`, job: () => spanAsync(args, tmp)})
    }
  }
  const results = await pool(
    jobs.map((j) => j.job),
    2,
  )
  const bad: string[] = []
  results.forEach((r, i) => {
    const cmd = jobs[i].name.split(' × ')[0]
    const lines = r.stderr.split('\n').filter((l) => l !== '' && !/^[a-z ]+: (from|step) |^span [a-z ]+: (config|model): /.test(l))
    const ok = r.code === 1 && r.stdout === '' && lines.length === 1 && lines[0].startsWith(`span ${cmd}: `)
    if (!ok) bad.push(`${jobs[i].name}: exit ${r.code}, stderr ${JSON.stringify(r.stderr.slice(0, 300))}`)
  })
  expect(bad).toEqual([])
  expect(readdirSync(tmp).filter((n) => n.includes('.tmp-') || /^o\d/.test(n))).toEqual([])
  if (full) expect(readdirSync(full)).toEqual(['filler'])
  console.log(
    `bad-input matrix: ${results.length} cases (${Object.keys(cmds).length} commands × ${Object.keys(cases).length} faults, evals' 3 without an output path${full ? '' : ', full disk skipped: no tmpfs mount'}), all one line and exit 1`,
  )
}

/** Issue 25: every command of `cmds` × full stdout, /dev/zero as each file, a symbolic-link output, an output that is an input. */
async function issue25(cmds: Record<string, Cmd>, tmp: string, full: string | null): Promise<void> {
  const jobs = issue25Jobs(cmds, full)
  const started = Date.now()
  const results = await pool(
    jobs.map((j) => () => shellTimed(j.line, 90_000, tmp)),
    2,
  )
  const bad = results.flatMap((r, i) => {
    const why = jobs[i].check(r)
    return why ? [`${jobs[i].name}: ${why}; exit ${r.code}, stderr ${JSON.stringify(r.stderr.slice(-300))}`] : []
  })
  expect(bad).toEqual([])
  expect(readdirSync(tmp).filter((n) => n.includes('.tmp-'))).toEqual([])
  if (full) expect(readdirSync(full).filter((n) => n !== 'filler' && !n.startsWith('stdout-'))).toEqual([])
  const counts = [...new Set(jobs.map((j) => j.fault))].map((f) => `${f} ${jobs.filter((j) => j.fault === f).length}`)
  console.log(`bad-input matrix, issue 25: ${jobs.length} cases (${counts.join(', ')}) in ${Math.round((Date.now() - started) / 1000)} s`)
}

/** A bash line run with a time limit (a read that never ends is a failure, not a hung suite). */
export function shellTimed(line: string, ms: number, cwd: string): Promise<{code: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const p = spawn('bash', ['-c', line], {cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true})
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => process.kill(-p.pid!, 'SIGKILL'), ms)
    p.on('close', (code) => {
      clearTimeout(timer)
      resolve({code: code ?? -1, stdout, stderr: code === null ? `${stderr}[killed after ${ms / 1000} s]` : stderr})
    })
  })
}

/** The `span CMD:` lines of stderr, progress and notices of the training commands left out. */
const spanLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l !== '' && !/^[a-z ]+: (from|step) |^span [a-z ]+: (config|model|effective batch|\d+ steps take|checkpoint|warning): /.test(l))

interface Job {
  name: string
  fault: string
  line: string
  check(r: {code: number; stdout: string; stderr: string}): string | null
}

/** What issue 25 adds to the matrix, for every command (its causes 1, 4, 5, 6). */
function issue25Jobs(cmds: Record<string, Cmd>, full: string | null): Job[] {
  const node = `'${process.execPath}' '${BIN}'`
  const jobs: Job[] = []
  const one = (cmd: string, r: {code: number; stderr: string}, codes: number[]): string | null => {
    const lines = spanLines(r.stderr)
    if (!codes.includes(r.code)) return `exit ${r.code}, not ${codes.join(' or ')}`
    return lines.length === 1 && lines[0].startsWith(`span ${cmd}: `) ? null : 'not one `span CMD:` line'
  }
  for (const [cmd, c] of Object.entries(cmds)) {
    const slug = cmd.replace(' ', '-')
    const line = (input: string, out: string, extra = '') => `${node} ${c.args.replace('IN', input).replace('OUT', out)}${extra}`
    // full stdout: the data (or a training run's metrics) goes to stdout; quiet commands have none to lose
    const toStdout = (out: string) => (c.dirOut || c.noOutput ? line(c.input, out) : `${node} ${c.args.replace('IN', c.input).replace(/ (-o|--svg) OUT/, '')}`)
    for (const [fault, sink, out] of [
      ['stdout on /dev/full', '/dev/full', `sf-${slug}`],
      ['stdout on a full tmpfs', full ? `${full}/stdout-${slug}` : null, `st-${slug}`],
    ] as const) {
      if (sink === null) continue
      jobs.push({
        name: `${cmd} × ${fault}`,
        fault,
        line: `rm -rf ${out}; ${toStdout(out)} > ${sink}`,
        check: (r) => {
          if (c.quiet) return r.code === 0 ? null : 'exit not 0 (nothing on stdout to lose)'
          const last = spanLines(r.stderr).at(-1) ?? ''
          return r.code === 1 && last.startsWith(`span ${cmd}: `) && /(stdout|metrics output): no space left on device \(ENOSPC\)/.test(last)
            ? null
            : 'not exit 1 with the ENOSPC of stdout last'
        },
      })
    }
    // /dev/zero as each file argument: the input, its model, and its other file flags
    const zeros: [string, string][] = [['input', line('/dev/zero', `z-${slug}`)]]
    for (const flag of ['--model', '--init', ...(c.zero ?? [])]) {
      const base = line(c.input, `z-${slug}`)
      const re = new RegExp(` ${flag} \\S+`)
      if (re.test(c.args) || re.test(base)) zeros.push([flag, base.replace(re, ` ${flag} /dev/zero`)])
      else if (c.zero?.includes(flag)) zeros.push([flag, `${base} ${flag} /dev/zero`])
    }
    for (const [what, l] of zeros) {
      if (c.args.startsWith('export') && what === '--model') continue // IN is export's --model
      jobs.push({name: `${cmd} × /dev/zero as ${what}`, fault: '/dev/zero', line: `${l} > /dev/null`, check: (r) => one(cmd, r, [1, 2])})
    }
    if (c.noOutput) continue
    // a symbolic-link output: written through, the link kept
    const target = `lt-${slug}`
    const link = `ln-${slug}`
    jobs.push({
      name: `${cmd} × a symbolic-link output`,
      fault: 'symbolic-link output',
      line: `rm -rf ${target} ${link}; ${c.dirOut ? `mkdir ${target}; ` : ''}ln -s ${target} ${link} && ${line(c.input, link)} > /dev/null && test -L ${link} && test -s ${c.dirOut ? `${target}/.` : target} && ls ${target} > /dev/null`,
      check: (r) => (r.code === 0 ? null : 'failed, or the link was replaced, or nothing was written where it points'),
    })
    // an output that is an input: refused (or failing on its own), the input byte for byte as it was
    const input = c.input.startsWith('/') || c.input.includes('/checkpoint-') ? c.input : `in-${slug}`
    const copy = input === c.input ? '' : `rm -rf ${input}; cp -r ${c.input} ${input}; `
    const sum = `find ${input} -type f -exec sha256sum {} + | sort | sha256sum`
    jobs.push({
      name: `${cmd} × an output that is an input`,
      fault: 'output is an input',
      line: `${copy}before=$(${sum}); ${line(input, input)} > /dev/null; code=$?; [ "$(${sum})" = "$before" ] || echo 'span: the input changed' >&2; exit $code`,
      check: (r) => (r.stderr.includes('the input changed') ? 'the input changed' : one(cmd, r, [1, 2])),
    })
  }
  return jobs
}
