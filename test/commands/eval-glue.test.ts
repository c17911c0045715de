// `span eval glue` and `span eval compare` as spawned processes (build first: npm run build,
// which also writes oclif.manifest.json), stdout and stderr asserted separately.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {describeShared, sharedPath} from '../helpers/shared-data.js'

const describe = describeShared('glue')

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const DATA = sharedPath('glue')
const RTE = join(DATA, 'RTE', 'dev.tsv')
const dir = mkdtempSync(join(tmpdir(), 'span-eval-glue-'))

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function span(args: string[]): Run {
  return runSpan(['eval', ...args], {cwd: dir, timeout: 60_000})
}

/** The gold column of a labelled file (last column), data rows only. */
function goldLabels(path: string, header = true): string[] {
  const lines = readFileSync(path, 'utf8').replace(/^\uFEFF/, '').split('\n').filter((l) => l !== '')
  return (header ? lines.slice(1) : lines).map((l) => l.split('\t'))
    .map((f) => (path.includes('MRPC') ? f[0] : path.includes('CoLA') ? f[1] : f[f.length - 1]))
}

/** A submission file: the gold labels with rows [from, to) flipped to the other RTE label. */
function rtePreds(name: string, from: number, to: number): string {
  const flip = (l: string) => (l === 'entailment' ? 'not_entailment' : 'entailment')
  const rows = goldLabels(RTE).map((l, i) => `${i}\t${i >= from && i < to ? flip(l) : l}`)
  const path = join(dir, name)
  writeFileSync(path, ['index\tprediction', ...rows].join('\n') + '\n')
  return path
}

function submission(name: string, values: string[]): string {
  const path = join(dir, name)
  writeFileSync(path, ['index\tprediction', ...values.map((v, i) => `${i}\t${v}`)].join('\n') + '\n')
  return path
}

let A = ''
let B = ''

beforeAll(() => {
  const manifest = join(ROOT, 'oclif.manifest.json')
  const built = existsSync(join(ROOT, 'dist', 'commands', 'eval', 'glue.js')) && (!existsSync(manifest) || readFileSync(manifest, 'utf8').includes('"eval:glue"'))
  if (!built) throw new Error('build first: npm run build')
  A = rtePreds('a.tsv', 0, 27) // 27 wrong
  B = rtePreds('b.tsv', 10, 50) // 40 wrong
})

describe('span eval glue', () => {
  it('prints the readable table for RTE', () => {
    const r = span(['glue', '--task', 'rte', '--gold', RTE, '--pred', A])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toBe(
      `task         RTE\ngold         ${RTE}\npredictions  ${A}\nexamples     277\nacc          ${(250 / 277).toFixed(4)}\nscore        ${(250 / 277).toFixed(4)}  (acc)\n`,
    )
  })

  it('prints one JSON object with --json: MRPC acc, F1 and their mean', () => {
    const mrpc = join(DATA, 'MRPC', 'dev.tsv')
    const allOne = submission('mrpc-ones.tsv', goldLabels(mrpc).map(() => '1'))
    const r = span(['glue', '--task', 'MRPC', '--gold', mrpc, '--pred', allOne, '--json'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    const acc = 279 / 408
    const f1 = 558 / 687 // 2·279 / (2·279 + 129)
    expect(JSON.parse(r.stdout)).toEqual({task: 'MRPC', n: 408, acc, f1, acc_and_f1: (acc + f1) / 2, score: (acc + f1) / 2})
    expect(r.stdout.split('\n')).toHaveLength(2)
  })

  it('STS-B: the gold scores as predictions correlate perfectly', () => {
    const sts = join(DATA, 'STS-B', 'dev.tsv')
    const pred = submission('sts.tsv', goldLabels(sts))
    const r = span(['glue', '--task', 'sts-b', '--gold', sts, '--pred', pred, '--json'])
    expect(r.stderr).toBe('')
    const s = JSON.parse(r.stdout)
    expect([s.n, s.pearson, s.spearmanr, s.corr, s.score]).toEqual([1500, 1, 1, 1, 1])
  })

  it('CoLA with constant predictions: mcc 0 and a warning on stderr', () => {
    const cola = join(DATA, 'CoLA', 'dev.tsv')
    const pred = submission('cola-ones.tsv', goldLabels(cola, false).map(() => '1'))
    const r = span(['glue', '--task', 'CoLA', '--gold', cola, '--pred', pred, '--json'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('span eval glue: warning: Matthews correlation is undefined (gold labels or predictions are constant); set to 0\n')
    expect(JSON.parse(r.stdout)).toEqual({task: 'CoLA', n: 1043, mcc: 0, score: 0})
  })

  it('missing and extra indices are one-line errors, nothing on stdout', () => {
    const short = submission('short.tsv', ['entailment', 'entailment'])
    const r = span(['glue', '--task', 'RTE', '--gold', RTE, '--pred', short])
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toBe(`span eval glue: ${short}: no prediction for 275 of 277 gold examples (index 2, 3, 4, 5, 6, …)\n`)
    const extra = join(dir, 'extra.tsv')
    writeFileSync(extra, readFileSync(A, 'utf8') + '277\tentailment\n')
    const e = span(['glue', '--task', 'RTE', '--gold', RTE, '--pred', extra])
    expect([e.code, e.stdout]).toEqual([1, ''])
    expect(e.stderr).toBe(`span eval glue: ${extra}:279: index 277 is not in the gold file ${RTE} (1 extra predictions)\n`)
  })

  it('bad labels and unknown tasks are one-line errors', () => {
    const bad = submission('bad.tsv', ['yes'])
    const r = span(['glue', '--task', 'RTE', '--gold', RTE, '--pred', bad])
    expect([r.code, r.stdout, r.stderr]).toEqual([1, '', `span eval glue: ${bad}:2: unknown RTE label "yes" (expected entailment or not_entailment)\n`])
    const t = span(['glue', '--task', 'snli', '--gold', RTE, '--pred', bad])
    expect([t.code, t.stdout]).toEqual([2, '']) // a flag's value: a usage error
    expect(t.stderr).toMatch(/^span eval glue: unknown GLUE task "snli" \(one of CoLA, .*\)\n$/)
  })
})

describe('span eval compare', () => {
  it("McNemar's test: b = 23 (rows 27–49), c = 10 (rows 0–9), chi-square from b + c = 33", () => {
    const r = span(['compare', '--task', 'RTE', '--gold', RTE, '--a', A, '--b', B, '--json'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    const s = JSON.parse(r.stdout)
    expect([s.task, s.n, s.acc_a, s.acc_b, s.b, s.c, s.test]).toEqual(['RTE', 277, 250 / 277, 237 / 277, 23, 10, 'chi2'])
    expect(s.statistic).toBeCloseTo(144 / 33, 12)
    expect(s.p_value).toBeCloseTo(0.0367138563627041, 14) // math.erfc(sqrt(144/33/2))
  })

  it('the table, and the exact test forced', () => {
    const r = span(['compare', '--task', 'RTE', '--gold', RTE, '--a', A, '--b', B, '--test', 'exact'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toContain(`A        ${A}  acc 0.9025\n`)
    expect(r.stdout).toContain('b        23  (A right, B wrong)\nc        10  (A wrong, B right)\n')
    expect(r.stdout).toContain('test     McNemar, exact binomial, two-sided (b + c = 33)\n')
    expect(r.stdout).toMatch(/\np-value {2}0\.03\d+\n$/)
  })

  it('refuses STS-B', () => {
    const r = span(['compare', '--task', 'STS-B', '--gold', RTE, '--a', A, '--b', B])
    expect([r.code, r.stdout]).toEqual([2, '']) // --task wrong for the command: a usage error
    expect(r.stderr).toBe("span eval compare: McNemar's test needs a classification task; STS-B is a regression task\n")
  })
})
