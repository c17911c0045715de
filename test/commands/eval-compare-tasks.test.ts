// `span eval compare` beyond GLUE, as spawned processes (build first: npm run build): NER per
// token, tacred, nli and swag per example, on hand-built files whose b and c are counted here by
// hand; a prediction file may be - (stdin); bad predictions give one source:line line, exit 1.
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-compare-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const compare = (args: string[], input?: string) => runSpan(['eval', 'compare', ...args], {cwd: dir, input, timeout: 60_000})

// 6 token lines (the -DOCSTART- line is not one of them): I-ORG O I-MISC O I-PER I-PER
const GOLD =
  '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n'
// A, the gold layout with its tag last (span predict ner): wrong on German only
const A = GOLD.split('\n')
  .map((l) => (l === '' ? l : `${l} ${l.startsWith('German') ? 'O' : l.split(' ').pop()}`))
  .join('\n')
// B, token PRED lines: wrong on rejects and Blackburn
const B = '-DOCSTART- O\n\nEU I-ORG\nrejects I-ORG\nGerman I-MISC\ncall O\n\nPeter I-PER\nBlackburn O\n'

describe('span eval compare --task ner: one outcome per token', () => {
  it('b = 2 (A right, B wrong), c = 1; the exact test (b + c < 25); token accuracies', () => {
    const r = compare(['--task', 'ner', '--gold', file('g.conll', GOLD), '--a', file('a.pred', A), '--b', file('b.pred', B), '--json'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(JSON.parse(r.stdout)).toEqual({task: 'ner', n: 6, unit: 'token', acc_a: 5 / 6, acc_b: 4 / 6, b: 2, c: 1, test: 'exact', statistic: 1, p_value: 1})
  })

  it('reads B from stdin (-) and prints the table in tokens', () => {
    const r = compare(['--task', 'NER', '--gold', file('g.conll', GOLD), '--a', file('a.pred', A), '--b', '-'], B)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toContain('task     ner, 6 tokens\n')
    expect(r.stdout).toContain('b        2  (A right, B wrong)\nc        1  (A wrong, B right)\n')
  })

  it('a prediction whose token differs from the gold file: one source:line line, exit 1, nothing on stdout', () => {
    const r = compare(['--task', 'ner', '--gold', file('g.conll', GOLD), '--a', file('a.pred', A), '--b', file('bad.pred', B.replace('German', 'French'))])
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toMatch(/^span eval compare: .*bad\.pred:5: token "French" where .*g\.conll:5 has "German"\n$/)
  })
})

describe('span eval compare --task tacred|nli|swag: one outcome per example', () => {
  it('tacred: A right on all 5, B wrong on 4: b = 4, c = 0, exact p = 2/16', () => {
    const g = file('r.gold', 'Other\nCause-Effect(e1,e2)\nOther\nMember-Collection(e2,e1)\nOther\n')
    const b = file('r.b', 'Cause-Effect(e1,e2)\nOther\nOther\nOther\nMember-Collection(e2,e1)\n')
    const r = compare(['--task', 'tacred', '--gold', g, '--a', g, '--b', b, '--json'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(JSON.parse(r.stdout)).toMatchObject({task: 'tacred', n: 5, unit: 'example', acc_a: 1, acc_b: 0.2, b: 4, c: 0, test: 'exact', p_value: 0.125})
  })

  it('nli: rows labelled - are not examples; chi-square when forced', () => {
    const g = file(
      'n.jsonl',
      ['neutral', '-', 'entailment', 'contradiction'].map((l, i) => JSON.stringify({sentence1: `p${i}`, sentence2: 'h', gold_label: l})).join('\n') + '\n',
    )
    const r = compare([
      '--task',
      'nli',
      '--gold',
      g,
      '--a',
      file('n.a', 'neutral\nneutral\ncontradiction\n'),
      '--b',
      file('n.b', 'entailment\nentailment\nneutral\n'),
      '--test',
      'chi2',
      '--json',
    ])
    expect([r.code, r.stderr]).toEqual([0, ''])
    // A right on rows 1 and 3, B right on row 2: b = 2, c = 1, (|2 − 1| − 1)² / 3 = 0
    expect(JSON.parse(r.stdout)).toMatchObject({n: 3, acc_a: 2 / 3, acc_b: 1 / 3, b: 2, c: 1, test: 'chi2', statistic: 0, p_value: 1})
  })

  it('swag: choice numbers; an out-of-range choice is one source:line line, exit 1', () => {
    const csv = 'sent1,sent2,ending0,ending1,ending2,ending3,label\na,b,c,d,e,f,2\ng,h,i,j,k,l,0\n'
    const g = file('s.csv', csv)
    const ok = compare(['--task', 'swag', '--gold', g, '--a', file('s.a', '2\n0\n'), '--b', file('s.b', '2\n1\n'), '--json'])
    expect([ok.code, ok.stderr]).toEqual([0, ''])
    expect(JSON.parse(ok.stdout)).toMatchObject({n: 2, b: 1, c: 0, p_value: 1})
    const bad = compare(['--task', 'swag', '--gold', g, '--a', file('s.a', '2\n0\n'), '--b', file('s.bad', '2\n7\n')])
    expect([bad.code, bad.stdout]).toEqual([1, ''])
    expect(bad.stderr).toMatch(/^span eval compare: .*s\.bad:2: unknown label "7" \(expected one of 0, 1, 2, 3\)\n$/)
  })
})
