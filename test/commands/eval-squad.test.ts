// `span eval squad` in-process through oclif (flag parsing, dispatch, one-line errors), on
// hand-built files and the shared XQuAD / SQuAD 2.0 sets, against the official scripts' goldens.
import {runCommand} from '@oclif/test'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {describeShared, sharedPath} from '../helpers/shared-data.js'

const describeData = describeShared('squad/xquad.en.json', 'squad/squad-v2.0-dev-subset-normans-rhine.json')

const root = join(__dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'span-eval-squad-'))
const XQUAD = sharedPath('squad', 'xquad.en.json')
const RHINE = sharedPath('squad', 'squad-v2.0-dev-subset-normans-rhine.json')
// ignoreManifest: a stale oclif.manifest.json in a working tree must not hide the command
const run = (args: string[]) => runCommand(['eval', 'squad', ...args], {root, ignoreManifest: true} as never)
const golden = (name: string) => JSON.parse(readFileSync(join(root, 'fixtures', 'squad', name), 'utf8')).cases
const PREFIX = /^span eval[ :]squad: /

function file(name: string, content: unknown): string {
  const path = join(tmp, name)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

afterEach(() => {
  process.exitCode = undefined // a failing command sets it; the test runner must not inherit it
})

describeData('span eval squad: the official scripts\' output', () => {
  it('v1.1 --json prints exactly what evaluate-v1.1.py prints', async () => {
    const c = golden('golden-v1.json').find((x: {name: string}) => x.name === 'multiple-gold')
    const r = await run(['--data', file('v1.json', c.data), '--pred', file('v1-pred.json', c.predictions), '--json'])
    expect([r.error, r.stderr, r.stdout]).toEqual([undefined, '', c.stdout])
  })

  it('v2.0 --json with --na-prob and a threshold prints exactly what evaluate-v2.0.py prints', async () => {
    for (const c of golden('golden-v2.json')) {
      const args = ['--data', file('v2.json', c.data), '--pred', file('v2-pred.json', c.predictions), '--json', '--na-prob-thresh', String(c.na_prob_thresh)]
      if (c.na_probs) args.push('--na-prob', file('na.json', c.na_probs))
      const r = await run(args)
      expect(r.stdout, c.name).toBe(c.stdout)
      expect(r.stderr, c.name).toMatch(/^(span eval squad: warning: predictions for ids not in the dataset, ignored: 1 \(e\.g\. zz\)\n)?$/)
    }
  })

  it('prints what the official scripts print for made-up predictions on XQuAD and the SQuAD 2.0 subset', async () => {
    for (const c of golden('golden-real.json')) {
      const args = ['--data', join(root, c.dataset), '--pred', file('real-pred.json', c.predictions), '--json']
      if (c.na_probs) args.push('--na-prob', file('real-na.json', c.na_probs), '--na-prob-thresh', String(c.na_prob_thresh))
      const r = await run(args)
      expect([r.stdout, r.stderr], c.name).toEqual([c.stdout, ''])
    }
  })

  it('warns about predicted questions without a na-prob, and scores them as answered', async () => {
    const c = golden('golden-v2.json').find((x: {name: string}) => x.name === 'na-probs-thresh-0')
    const {a1: _, ...naProbs} = c.na_probs
    const r = await run(['--data', file('v2.json', c.data), '--pred', file('v2-pred.json', c.predictions), '--na-prob', file('na-short.json', naProbs), '--na-prob-thresh', '0', '--json'])
    expect(r.stderr).toContain(`na-short.json: predicted questions without a na-prob, taken as answered: 1 (e.g. a1)\n`)
    expect(JSON.parse(r.stdout)).toMatchObject({total: 8, HasAns_total: 5})
  })

  it('--version 2.0 scores a v1.1 dataset with the v2.0 script (all questions answerable)', async () => {
    const c = golden('golden-v1.json').find((x: {name: string}) => x.name === 'multiple-gold')
    const r = await run(['--data', file('v1.json', c.data), '--pred', file('v1-pred.json', c.predictions), '--version', '2.0', '--json'])
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['exact', 'f1', 'total', 'HasAns_exact', 'HasAns_f1', 'HasAns_total'])
  })

  it('prints a readable table by default', async () => {
    const c = golden('golden-v2.json').find((x: {name: string}) => x.name === 'na-probs-default-thresh')
    const r = await run(['--data', file('v2.json', c.data), '--pred', file('v2-pred.json', c.predictions), '--na-prob', file('na.json', c.na_probs)])
    expect(r.stdout).toBe(
      [
        'SQuAD v2.0  8 questions',
        '               exact       F1   total',
        '  all          37.50    51.67       8',
        '  HasAns       40.00    62.67       5',
        '  NoAns        33.33    33.33       3',
        '  best exact   50.00  at na-prob threshold -3.5',
        '  best F1      64.17  at na-prob threshold 1e-05',
        '',
      ].join('\n'),
    )
  })

  it('scores the gold answers of XQuAD as 100, and reports missing and unknown ids on stderr', async () => {
    const data = JSON.parse(readFileSync(XQUAD, 'utf8'))
    const preds: Record<string, string> = {}
    for (const a of data.data) for (const p of a.paragraphs) for (const q of p.qas) preds[q.id] = q.answers[0].text
    const ids = Object.keys(preds)
    expect(ids).toHaveLength(1190)
    const all = await run(['--data', XQUAD, '--pred', file('x.json', preds), '--json'])
    expect([all.stdout, all.stderr]).toEqual(['{"exact_match": 100.0, "f1": 100.0}\n', ''])
    for (const id of ids.slice(0, 5)) delete preds[id]
    preds['not-a-question'] = 'x'
    const some = await run(['--data', XQUAD, '--pred', file('x.json', preds), '--json'])
    expect(JSON.parse(some.stdout)).toEqual({exact_match: (100 * 1185) / 1190, f1: (100 * 1185) / 1190})
    expect(some.stderr).toBe(
      `span eval squad: warning: questions without a prediction, counted as wrong: 5 (e.g. ${ids.slice(0, 3).join(', ')}, …)\n` +
        'span eval squad: warning: predictions for ids not in the dataset, ignored: 1 (e.g. not-a-question)\n',
    )
  })

  it('detects v2.0 from the dataset, and --version 1.1 refuses its unanswerable questions', async () => {
    const preds = file('empty-preds.json', {'56ddde6b9a695914005b9628': 'France'})
    const r = await run(['--data', RHINE, '--pred', preds, '--json'])
    expect(JSON.parse(r.stdout)).toMatchObject({total: 706, NoAns_total: 320, HasAns_total: 386})
    expect(r.stderr).toMatch(/^span eval squad: warning: questions without a prediction, counted as wrong: 705 \(e\.g\. /)
    const forced = await run(['--data', RHINE, '--pred', preds, '--version', '1.1'])
    expect(forced.stdout).toBe('')
    expect(forced.stderr).toMatch(new RegExp(PREFIX.source + `${RHINE}: question \\S+ has no answers, which SQuAD v1.1 cannot score`))
    expect(process.exitCode).toBe(1)
  })
})

describe('span eval squad: bad input is one line naming the file, with no output', () => {
  const data = () => file('ok.json', golden('golden-v1.json')[1].data)
  const cases: [string, () => string[], RegExp][] = [
    ['malformed predictions (line and column)', () => ['--data', data(), '--pred', file('bad.json', '{\n  "m1": "x",\n  "m2": }\n')], /bad\.json:3: invalid JSON at column 9: unexpected character "}"$/],
    ['a trailing comma', () => ['--data', data(), '--pred', file('comma.json', '{"m1": "x",}')], /comma\.json:1: invalid JSON at column 12: expected a double-quoted property name$/],
    ['an empty predictions file', () => ['--data', data(), '--pred', file('empty.json', '')], /empty\.json: empty file, expected JSON$/],
    ['an empty dataset file', () => ['--data', file('empty-data.json', ' \n'), '--pred', file('p.json', {m1: 'x'})], /empty-data\.json: empty file, expected JSON$/],
    ['a dataset not in SQuAD shape', () => ['--data', file('shape.json', {data: [{title: 'x'}]}), '--pred', file('p.json', {m1: 'x'})], /shape\.json: not a SQuAD dataset: data\[0\] has no "paragraphs" list$/],
    ['a dataset without questions', () => ['--data', file('noq.json', {data: []}), '--pred', file('p.json', {m1: 'x'})], /noq\.json: no questions in the dataset$/],
    ['predictions for another dataset', () => ['--data', data(), '--pred', file('other.json', {zz: 'x', yy: 'y'})], /other\.json: none of its 2 predictions is for a question of .*ok\.json \(predictions for another dataset\?\)$/],
    ['no predictions at all', () => ['--data', data(), '--pred', file('none.json', {})], /none\.json: no predictions \(an empty JSON object\)$/],
    ['predictions that are a list', () => ['--data', data(), '--pred', file('list.json', ['x'])], /list\.json: predictions must be one JSON object/],
    ['a prediction that is not a string', () => ['--data', data(), '--pred', file('num.json', {m1: 3})], /num\.json: the prediction for m1 is not a string \(3\)$/],
    ['a missing file', () => ['--data', data(), '--pred', join(tmp, 'nope.json')], /nope\.json: file not found$/],
    ['--na-prob with v1.1', () => ['--data', data(), '--pred', file('p.json', {m1: 'x'}), '--na-prob', file('na1.json', {m1: 0.5})], /--na-prob applies to SQuAD v2\.0 only/],
    ['a bad threshold', () => ['--data', data(), '--pred', file('p.json', {m1: 'x'}), '--na-prob-thresh', 'high'], /--na-prob-thresh must be a number, got "high"$/],
  ]
  it.each(cases)('%s', async (_, args, message) => {
    const r = await run(args())
    expect(r.stdout).toBe('')
    expect(r.stderr.split('\n')).toHaveLength(2) // one line and its newline
    expect(r.stderr).toMatch(PREFIX)
    expect(r.stderr.trimEnd()).toMatch(message)
    expect(process.exitCode).toBe(/--na-prob-thresh/.test(message.source) ? 2 : 1) // a flag's value is a usage error
  })
})
