// Makes fixtures/coref/golden-scorer.json: what the official CoNLL-2012 coreference scorer
// (conll/reference-coreference-scorers v8.01, commit f49f3f8a, scorer.pl) prints for the
// hand-built cases in fixtures/coref/cases/ and for LitBank and OntoGUM gold scored against
// themselves and against a perturbed copy (tools/coref-perturb.ts, seed 23). span's scorer
// (src/core/metrics/coref/) is tested against it (test/core/metrics/coref*.test.ts).
// The scorer is not in this repository (GPL-2). Fetch it (any clone holding that commit) and run:
//   SCORER=/path/to/reference-coreference-scorers npx tsx tools/make-coref-goldens.ts
// Each metric runs in its own process (`scorer.pl METRIC KEY RESPONSE none`): run as `all`, the
// scorer counts every repeated response mention once per metric (CorScorer.pm increments
// $main::repeated_mentions, which Score never resets), so its 10-repeat limit would then stop it
// at 3 repeats, part-way through. It also writes fixtures/coref/cases/random.*.conll (seeded).
// The real-data cases need ../shared/data/coref (data/SOURCES.md); they take ~15 min of Perl.
import {execFileSync, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {encodeCells} from '../src/core/tasks/coref/conll-cell.js'
import {parseConll, readConll} from '../src/core/tasks/coref/conll.js'
import {Rng} from '../src/core/util/rng.js'
import {PERTURB_SEED, perturbClusters, perturbedResponse} from './coref-perturb.js'

const COMMIT = 'f49f3f8a'
const METRICS = ['muc', 'bcub', 'ceafm', 'ceafe', 'blanc'] as const
const ROOT = join(import.meta.dirname, '..')
const CASES = join(ROOT, 'fixtures', 'coref', 'cases')
const DATA = process.env.SPAN_SHARED_DATA ?? join(ROOT, '..', 'shared', 'data')

/** The scorer at the pinned commit, unpacked into a temporary folder. */
function unpackScorer(): string {
  const repo = process.env.SCORER
  if (!repo) throw new Error('set SCORER to a clone of conll/reference-coreference-scorers')
  const dir = mkdtempSync(join(tmpdir(), 'coref-scorer-'))
  const gitDir = existsSync(join(repo, '.git')) ? join(repo, '.git') : repo
  const tar = execFileSync('git', ['--git-dir', gitDir, 'archive', COMMIT], {maxBuffer: 1 << 28})
  execFileSync('tar', ['-x', '-C', dir], {input: tar})
  return dir
}

interface Run {
  status: number | null
  stdout: string
  stderr: string
}

/** One metric's run; its first line (`version: 8.01 PATH`) left out. */
function score(scorer: string, metric: string, key: string, response: string): Run {
  const r = spawnSync('perl', [join(scorer, 'scorer.pl'), metric, key, response, 'none'], {cwd: scorer, encoding: 'utf8', maxBuffer: 1 << 28})
  return {status: r.status, stdout: r.stdout.replace(/^version: [^\n]*\n/, ''), stderr: r.stderr}
}

const allMetrics = (scorer: string, key: string, response: string) => Object.fromEntries(METRICS.map((m) => [m, score(scorer, m, key, response)]))

/** A seeded case: three 13-column documents with random gold and its perturbation as response. */
function writeRandomCase(): void {
  const rng = new Rng(2012)
  const docs = [0, 1, 2].map((d) => {
    const words = 60 + rng.int(40)
    const clusters = Array.from({length: 4 + rng.int(8)}, () =>
      Array.from({length: 1 + rng.int(5)}, () => {
        const s = rng.int(words)
        return [s, Math.min(words - 1, s + rng.int(4))] as [number, number]
      }),
    )
    const seen = new Set<string>()
    const unique = clusters.map((c) => c.filter(([s, e]) => !seen.has(`${s},${e}`) && seen.add(`${s},${e}`))).filter((c) => c.length > 0)
    const cells = encodeCells(words, unique, '|', '')
    const lines = cells.map((c, i) => [`r${d}`, '0', String(i % 20), `w${i}`, ...Array(8).fill('_'), c].join('\t'))
    const body = lines.flatMap((l, i) => (i % 20 === 19 ? [l, ''] : [l]))
    return `#begin document (r${d}); part 0\n${body.join('\n')}\n\n#end document\n`
  })
  const key = docs.join('')
  writeFileSync(join(CASES, 'random.key.conll'), key)
  const parsed = parseConll(key, 'random.key.conll')
  const response = parsed.map((d) => ({...d, clusters: perturbClusters(d.clusters, d.words.length, rng)}))
  writeFileSync(join(CASES, 'random.response.conll'), perturbedResponse(response, PERTURB_SEED))
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/** LitBank and OntoGUM gold as one named key file each (OntoGUM's empty names filled from file names). */
function realKeys(tmp: string): {name: string; folder: string; key: string}[] {
  const out = []
  for (const [name, folder] of [
    ['litbank', 'coref/litbank/conll'],
    ['ontogum', 'coref/ontogum/conll'],
  ] as const) {
    const dir = join(DATA, folder)
    if (!existsSync(dir)) continue
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.conll'))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const text = files.map((f) => readFileSync(join(dir, f), 'utf8').replace(/^(#\s*begin document )\n/, `$1${f.replace(/\.conll$/, '')}\n`)).join('')
    const key = join(tmp, `${name}.key.conll`)
    writeFileSync(key, text)
    out.push({name, folder, key})
  }
  return out
}

function realCases(scorer: string) {
  const tmp = mkdtempSync(join(tmpdir(), 'coref-real-'))
  const real: Record<string, unknown> = {}
  for (const {name, folder, key} of realKeys(tmp)) {
    const response = perturbedResponse(readConll(join(DATA, folder)), PERTURB_SEED)
    const file = join(tmp, `${name}.perturbed.conll`)
    writeFileSync(file, response)
    real[`${name}-self`] = {gold: folder, response: 'the gold itself', ...allMetrics(scorer, key, key)}
    real[`${name}-perturbed`] = {gold: folder, response: `tools/coref-perturb.ts, seed ${PERTURB_SEED}`, md5: md5(response), ...allMetrics(scorer, key, file)}
    console.error(`${name}: done`)
  }
  return real
}

function main(): void {
  const scorer = unpackScorer()
  writeRandomCase()
  const names = readdirSync(CASES)
    .filter((f) => f.endsWith('.key.conll'))
    .map((f) => f.replace(/\.key\.conll$/, ''))
    .sort()
  const cases = Object.fromEntries(names.map((n) => [n, allMetrics(scorer, join(CASES, `${n}.key.conll`), join(CASES, `${n}.response.conll`))]))
  const golden = {
    scorer: `conll/reference-coreference-scorers v8.01 @${COMMIT}: perl scorer.pl METRIC KEY RESPONSE none, one process per metric; stdout without its version line`,
    made_by: 'tools/make-coref-goldens.ts',
    cases,
    real: process.argv.includes('--no-real') ? {} : realCases(scorer),
  }
  writeFileSync(join(ROOT, 'fixtures', 'coref', 'golden-scorer.json'), JSON.stringify(golden, null, 1) + '\n')
}

main()
