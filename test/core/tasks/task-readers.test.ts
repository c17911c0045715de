// Readers of the issue-15 tasks: formats, and one-line `source:line` errors for bad input.
import {gzipSync} from 'node:zlib'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {arrayElementLines, readJsonRecords} from '../../../src/core/tasks/common/records.js'
import {readMrqaFile} from '../../../src/core/tasks/mrqa/read.js'
import {readNliFile} from '../../../src/core/tasks/nli/read.js'
import {parseCsv, readSwagFile} from '../../../src/core/tasks/swag/read.js'
import {readRelationFile, relationLabels} from '../../../src/core/tasks/tacred/read.js'

const dir = mkdtempSync(join(tmpdir(), 'span-task-readers-'))
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}
const rel = (o: Record<string, unknown>) =>
  JSON.stringify({token: ['Bill', 'founded', 'Microsoft', '.'], subj_start: 0, subj_end: 0, obj_start: 2, obj_end: 2, relation: 'org:founded_by', ...o})

describe('JSON records', () => {
  it('finds the line each element of a JSON list starts on', () => {
    const text = '[\n {"a": "[x]"},\n {"b": [1,\n 2]}, {"c": "\\"}"}\n]'
    expect(arrayElementLines(text)).toEqual([2, 3, 4])
    expect(readJsonRecords(file('l.json', text)).map((r) => r.line)).toEqual([2, 3, 4])
  })

  it('reads JSON lines, gzip or not, and names the bad line', () => {
    expect(readJsonRecords(file('a.jsonl.gz', gzipSync('{"a":1}\n\n{"a":2}\n'))).map((r) => r.line)).toEqual([1, 3])
    expect(() => readJsonRecords(file('b.jsonl', '{"a":1}\n{"a":\n'))).toThrow(/b\.jsonl:2: invalid JSON/)
  })
})

describe('TACRED / SemEval reader', () => {
  it('reads TACRED lists and SemEval lines; PTB brackets become characters; labels negative first', () => {
    const p = file(
      't.json',
      `[${rel({subj_type: 'PERSON', obj_type: 'ORGANIZATION', token: ['-LRB-', 'founded', 'X', '.']})},\n${rel({relation: 'no_relation'})}]`,
    )
    const ex = readRelationFile(p, {requireLabel: true})
    expect(ex[0].tokens[0]).toBe('(')
    expect(ex[0].subjType).toBe('PERSON')
    expect(ex[1].line).toBe(2)
    expect(relationLabels(ex, 'no_relation')).toEqual(['no_relation', 'org:founded_by'])
    expect(readRelationFile(file('s.jsonl', rel({token: ['constructor', 'x', 'y']}) + '\n'), {requireLabel: true})[0].tokens[0]).toBe('constructor')
  })

  it.each([
    ['missing field', rel({relation: undefined}), /x\.jsonl:2: missing field "relation"/],
    ['span out of range', rel({obj_end: 9}), /x\.jsonl:2: span obj_start\.\.obj_end = 2\.\.9 is out of range for 4 tokens/],
    ['reversed span', rel({subj_start: 2, subj_end: 1}), /x\.jsonl:2: span subj_start/],
    ['unknown label', rel({relation: 'per:age'}), /x\.jsonl:2: unknown relation "per:age"/],
    ['wrong format', '"just a string"', /x\.jsonl:2: expected a JSON object/],
  ])('%s: one line with source:line', (_, bad, re) => {
    const p = file('x.jsonl', `${rel({})}\n${bad}\n`)
    expect(() => readRelationFile(p, {requireLabel: true, labels: ['no_relation', 'org:founded_by']})).toThrow(re)
  })
})

describe('MRQA reader', () => {
  const ctx = (qas: unknown[]) => JSON.stringify({context: 'Paris is in France.', qas})
  const qa = (o: Record<string, unknown>) => ({
    qid: 'q',
    question: 'Where?',
    answers: ['France'],
    detected_answers: [{text: 'France', char_spans: [[12, 17]]}],
    ...o,
  })

  it('skips the header and trains on the earliest detected span', () => {
    const two = qa({detected_answers: [{char_spans: [[12, 17]]}, {char_spans: [[0, 4]]}]})
    const f = readMrqaFile(file('m.jsonl.gz', gzipSync(`{"header": {"dataset": "x"}}\n${ctx([two])}\n`)), {needSpans: true})
    expect(f.header).toEqual({dataset: 'x'})
    expect(f.examples[0].answers).toEqual([{text: 'Paris', start: 0}])
    expect(f.gold).toEqual([{qid: 'q', answers: ['France']}])
  })

  it.each([
    ['span out of range', qa({detected_answers: [{char_spans: [[12, 30]]}]}), /m2\.jsonl:2: qas\[0\] \(q\): char span \[12,30\] is out of range/],
    ['missing qid', qa({qid: undefined}), /m2\.jsonl:2: missing field "qid"/],
    ['no span to train on', qa({detected_answers: []}), /m2\.jsonl:2: .*no detected_answers/],
  ])('%s', (_, bad, re) => {
    expect(() => readMrqaFile(file('m2.jsonl', `{"header": {}}\n${ctx([bad])}\n`), {needSpans: true})).toThrow(re)
  })
})

describe('NLI reader', () => {
  it('reads SNLI fields, drops "-" rows, and reads the premise/hypothesis/label form', () => {
    const snli = readNliFile(
      file('n.jsonl', '{"sentence1":"a","sentence2":"b","gold_label":"neutral","pairID":"p1"}\n{"sentence1":"a","sentence2":"c","gold_label":"-"}\n'),
      {requireLabel: true},
    )
    expect(snli).toEqual({examples: [{id: 'p1', premise: 'a', hypothesis: 'b', label: 1, line: 1}], dropped: 1})
    expect(readNliFile(file('n2.jsonl', '{"premise":"a","hypothesis":"b","label":"contradiction"}\n'), {requireLabel: true}).examples[0].label).toBe(2)
  })

  it('names unknown labels and missing fields with their line', () => {
    expect(() =>
      readNliFile(file('n3.jsonl', '{"premise":"a","hypothesis":"b","label":"neutral"}\n{"premise":"a","hypothesis":"b","label":"maybe"}\n'), {
        requireLabel: true,
      }),
    ).toThrow(/n3\.jsonl:2: unknown label "maybe"/)
    expect(() => readNliFile(file('n4.jsonl', '{"premise":"a","label":"neutral"}\n'), {requireLabel: true})).toThrow(/n4\.jsonl:1: missing field "hypothesis"/)
  })
})

describe('SWAG reader', () => {
  const header = ',video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\n'
  it('parses quoted CSV fields (commas, quotes, newlines) with the line each row starts on', () => {
    expect(parseCsv('a,"b,""c""\nd",e\nf,g,h\n', 's')).toEqual([
      {fields: ['a', 'b,"c"\nd', 'e'], line: 1},
      {fields: ['f', 'g', 'h'], line: 3},
    ])
  })

  it('reads the CSV and JSON lines forms', () => {
    const csv = readSwagFile(file('s.csv', `${header}0,v,1,x,"A man, tall.",He,gold,a,b,c,d,2\n`), {requireLabel: true})
    expect(csv[0]).toMatchObject({context: 'A man, tall.', start: 'He', endings: ['a', 'b', 'c', 'd'], label: 2, line: 2})
    expect(readSwagFile(file('s.jsonl', '{"sent1":"x","sent2":"y","endings":["a","b"],"label":1}\n'), {requireLabel: true})[0].endings).toEqual(['a', 'b'])
  })

  it('names bad rows with their line', () => {
    expect(() => readSwagFile(file('s2.csv', `${header}0,v,1,x,s,He,gold,a,b,c,d,7\n`), {requireLabel: true})).toThrow(
      /s2\.csv:2: label "7" is not a choice number 0\.\.3/,
    )
    expect(() => readSwagFile(file('s3.csv', `${header}0,v,1,x,s\n`), {requireLabel: true})).toThrow(/s3\.csv:2: expected 12 columns/)
    expect(() => readSwagFile(file('s4.csv', 'a,b\n1,2\n'), {requireLabel: true})).toThrow(/s4\.csv:1: not a SWAG CSV/)
  })
})
