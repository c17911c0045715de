// Bad input for every issue-15 task, in-process through oclif: a file of the wrong format, a
// missing field, a span out of range, an unknown label. Each gives one stderr line
// `span CMD: source:line: message`, exit 1, and leaves no --out directory or -o file behind.
import {runCommand} from '@oclif/test'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-tasks-bad-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const out = join(dir, 'never')

afterEach(() => {
  process.exitCode = undefined // a failing command sets it; the test runner must not inherit it
})

const CONLL = 'EU NNP I-NP I-ORG\nrejects VBZ I-VP O\n'
const rel = (o: Record<string, unknown>) =>
  JSON.stringify({token: ['Bill', 'works', 'for', 'Acme'], subj_start: 0, subj_end: 0, obj_start: 3, obj_end: 3, relation: 'r', ...o})
const nli = (o: Record<string, unknown>) => JSON.stringify({premise: 'a', hypothesis: 'b', label: 'neutral', ...o})
const mrqa = (qa: Record<string, unknown>) =>
  `{"header": {"dataset": "x"}}\n${JSON.stringify({context: 'Denver Broncos won', qas: [{qid: 'q1', question: 'who?', answers: ['Denver Broncos'], detected_answers: [{text: 'Denver Broncos', char_spans: [[0, 13]]}], ...qa}]})}\n`
const SWAG = 'sent1,sent2,ending0,ending1,ending2,ending3,label\n'

// [task, fault, the training file (name, text), stderr after `span finetune TASK: `, extra flags]
const cases: [string, string, string, string, RegExp, string[]?][] = [
  ['tacred', 'wrong format', 't.conll', CONLL, /^t\.conll:1: invalid JSON/],
  ['tacred', 'missing field', 't1.jsonl', `${rel({})}\n${rel({obj_start: undefined})}\n`, /^t1\.jsonl:2: missing field "obj_start"$/],
  ['tacred', 'span out of range', 't2.jsonl', `${rel({})}\n${rel({obj_end: 9})}\n`, /^t2\.jsonl:2: span obj_start\.\.obj_end = 3\.\.9 is out of range/],
  [
    'tacred',
    'unknown label (dev)',
    't3.jsonl',
    `${rel({})}\n`,
    /^t3d\.jsonl:2: unknown relation "zzz"/,
    ['--dev', file('t3d.jsonl', `${rel({})}\n${rel({relation: 'zzz'})}\n`)],
  ],
  ['ner', 'wrong format', 'n.json', '{"a": 1}\n', /^n\.json:1: not an IOB tag: "1}"/],
  ['ner', 'missing field', 'n1.conll', `${CONLL}German JJ\n`, /^n1\.conll:3: expected 4 columns as on the first token line, got 2$/],
  ['ner', 'not a tag', 'n2.conll', `${CONLL}German JJ I-NP Y-MISC\n`, /^n2\.conll:3: not an IOB tag/],
  [
    'ner',
    'unknown label (dev)',
    'n3.conll',
    CONLL,
    /^n3d\.conll:4: tag type XYZ does not occur in .*n3\.conll$/,
    ['--dev', file('n3d.conll', `${CONLL}\nGerman JJ I-NP I-XYZ\n`)],
  ],
  [
    'mrqa',
    'wrong format',
    'm.json',
    '{\n  "data": []\n}\n',
    /^m\.json:1: one JSON object over several lines; expected one JSON object per line or a JSON list$/,
  ],
  ['mrqa', 'missing field', 'm1.jsonl', mrqa({question: undefined}), /^m1\.jsonl:2: missing field "question"$/],
  [
    'mrqa',
    'span out of range',
    'm2.jsonl',
    mrqa({detected_answers: [{text: 'x', char_spans: [[5, 99]]}]}),
    /^m2\.jsonl:2: qas\[0\] \(q1\): char span \[5,99\] is out of range for a context of 18 characters$/,
  ],
  ['mrqa', 'no answer to train on', 'm3.jsonl', mrqa({detected_answers: []}), /^m3\.jsonl:2: qas\[0\] \(q1\): no detected_answers char span to train on$/],
  ['nli', 'wrong format', 'l.tsv', 'premise\thypothesis\tlabel\n', /^l\.tsv:1: invalid JSON/],
  ['nli', 'missing field', 'l1.jsonl', `${nli({})}\n${nli({hypothesis: undefined})}\n`, /^l1\.jsonl:2: missing field "hypothesis"$/],
  ['nli', 'unknown label', 'l2.jsonl', `${nli({})}\n${nli({label: 'maybe'})}\n`, /^l2\.jsonl:2: unknown label "maybe"/],
  ['swag', 'wrong format', 's.json', '{"a": 1}\n', /^s\.json:1: expected at least two endings/],
  ['swag', 'missing field', 's1.csv', `${SWAG}a,b,c,d,e,f,1\na,b,c,d\n`, /^s1\.csv:3: expected 7 columns as in the header, got 4$/],
  ['swag', 'unknown label', 's2.csv', `${SWAG}a,b,c,d,e,f,1\na,b,c,d,e,f,7\n`, /^s2\.csv:3: label "7" is not a choice number 0\.\.3$/],
]

describe('span finetune TASK on bad training or dev data', () => {
  it.each(cases)('%s: %s', async (task, _fault, name, text, re, extra = []) => {
    const train = file(name, text)
    const {stdout, stderr} = await runCommand(['finetune', task, '--preset', 'tiny', '--train', train, '--out', out, ...extra], {root})
    expect(process.exitCode).toBe(1)
    expect(stdout).toBe('')
    const lines = stderr.split('\n').filter((l) => l !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0].startsWith(`span finetune ${task}: ${dir}/`)).toBe(true)
    expect(lines[0].slice(`span finetune ${task}: ${dir}/`.length)).toMatch(re)
    expect(existsSync(out)).toBe(false)
  })
})

describe('span eval TASK on bad predictions', () => {
  it.each([
    ['tacred', ['--gold', file('eg.txt', 'r\nOther\n'), '--pred', file('ep.txt', 'r\n\n')], /ep\.txt:2: empty label$/],
    ['nli', ['--gold', file('eg.jsonl', `${nli({})}\n${nli({})}\n`), '--pred', file('ep2.txt', 'neutral\nmaybe\n')], /ep2\.txt:2: unknown label "maybe"/],
    ['swag', ['--gold', file('eg.csv', `${SWAG}a,b,c,d,e,f,1\n`), '--pred', file('ep3.txt', '4\n')], /ep3\.txt:1: unknown label "4"/],
    [
      'ner',
      ['--gold', file('eg.conll', CONLL), '--pred', file('ep4.txt', 'EU I-ORG\nrejected O\n')],
      /ep4\.txt:2: token "rejected" where .*eg\.conll:2 has "rejects"$/,
    ],
  ])('%s', async (task, args, re) => {
    const {stdout, stderr} = await runCommand(['eval', task as string, ...(args as string[])], {root})
    expect(process.exitCode).toBe(1)
    expect(stdout).toBe('')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(new RegExp(`^span eval ${task}: `))
    expect(stderr.trimEnd()).toMatch(re as RegExp)
  })
})

// Coreference (issue 23): bad CoNLL-2012 data for finetune, predict and eval coref
const DOC = '#begin document (x); part 0'
const row = (i: number, coref: string) => `x\t0\t${i}\tA\t_\t_\t_\t_\t_\t_\t_\t_\t${coref}`
const corefFaults: [string, string, RegExp][] = [
  [
    'a closing bracket with no opening',
    `${DOC}\n${row(0, '0)')}\n#end document\n`,
    /:2: a mention of cluster 0 closes here \('0\)'\) but none of cluster 0 is open$/,
  ],
  [
    'a mention left open at the end',
    `${DOC}\n${row(0, '(0')}\n${row(1, '')}\n#end document\n`,
    /:2: a mention of cluster 0 opens here and is still open at '#end document' \(line 4\)$/,
  ],
  ['a wrong column count', `${DOC}\n${row(0, '(0)')}\nx\t0\t1\tB\t_\t(0)\n#end document\n`, /:3: 6 tab-separated columns where this sentence has 13$/],
  ['no #end document', `${DOC}\n${row(0, '(0)')}\n${row(1, '(0)')}\n`, /:1: document '\(x\); part 0' has no '#end document' line$/],
]
const good = () => file('good.conll', `${DOC}\n${row(0, '(0)')}\n${row(1, '(0)')}\n#end document\n`)
const corefCommands: [string, (bad: string) => string[]][] = [
  ['finetune coref', (bad) => ['finetune', 'coref', '--preset', 'tiny', '--train', bad, '--out', out]],
  ['predict coref', (bad) => ['predict', 'coref', '--model', join(dir, 'no-model'), '--data', bad, '-o', join(dir, 'never.conll')]],
  ['eval coref', (bad) => ['eval', 'coref', '--gold', good(), '--pred', bad]],
]

describe('span finetune|predict|eval coref on bad CoNLL-2012 data', () => {
  it.each(corefCommands.flatMap(([cmd, argv]) => corefFaults.map(([fault, text, re]) => [cmd, fault, text, re, argv] as const)))(
    '%s: %s',
    async (cmd, fault, text, re, argv) => {
      const bad = file(`bad-${cmd.split(' ')[0]}-${corefFaults.findIndex((f) => f[0] === fault)}.conll`, text)
      const {stdout, stderr} = await runCommand(argv(bad), {root})
      expect(process.exitCode).toBe(1)
      expect(stdout).toBe('')
      const lines = stderr.trimEnd().split('\n')
      expect(lines, stderr).toHaveLength(1)
      expect(lines[0].startsWith(`span ${cmd}: ${bad}:`), lines[0]).toBe(true)
      expect(lines[0]).toMatch(re)
      expect(existsSync(out) || existsSync(join(dir, 'never.conll'))).toBe(false)
    },
  )
})
