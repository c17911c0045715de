// Real pipes of the issue-15 tasks: bin/run.js processes joined by bash (pipefail), as a user
// types them: span predict ner | span eval ner --pred -, cat | span predict nli --data - | span
// eval nli --pred -, | head on a predict, empty input, and a bad line in the middle of the data.
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {BIN, runShell} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-task-pipes-'))
const span = `${process.execPath} ${BIN}`
const sh = (script: string, input = '') => runShell(script, {cwd: dir, input, timeout: 120_000})
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), name)

const CONLL =
  '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n'
const NLI = Array.from({length: 6}, (_, i) =>
  JSON.stringify({premise: `a man sleeps ${i}`, hypothesis: 'a man is awake', label: i % 2 ? 'contradiction' : 'entailment'}),
).join('\n')

beforeAll(() => {
  file('g.conll', CONLL)
  file('n.jsonl', NLI + '\n')
  for (const [task, data] of [
    ['ner', 'g.conll'],
    ['nli', 'n.jsonl'],
  ]) {
    const r = sh(`${span} finetune ${task} --preset tiny --train ${data} --epochs 1 --max-len 16 --threads 1 --out ${task} > /dev/null`)
    expect([task, r.code]).toEqual([task, 0])
  }
}, 120_000)

describe('predict | eval', () => {
  it('ner: predict ner | eval ner --pred - scores every token line of the gold file', () => {
    const r = sh(`${span} predict ner --model ner --data g.conll --threads 1 | ${span} eval ner --gold g.conll --pred - --json`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    const s = JSON.parse(r.stdout)
    expect(s.tokens).toBe(7) // conlleval counts the -DOCSTART- line as a token
    expect(s.phrases).toBe(3) // IOB1: Peter I-PER Blackburn I-PER is one chunk
    const file = sh(`${span} predict ner --model ner --data g.conll --threads 1 -o p.txt && ${span} eval ner --gold g.conll --pred p.txt --json`)
    expect(JSON.parse(file.stdout)).toEqual(s)
  })

  it('nli: cat data | predict nli --data - | eval nli --pred -', () => {
    const r = sh(`cat n.jsonl | ${span} predict nli --model nli --data - --threads 1 | ${span} eval nli --gold n.jsonl --pred - --json`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    const s = JSON.parse(r.stdout)
    expect(s.total).toBe(6)
    expect(s.correct).toBe(Math.round(s.accuracy * 6))
  })

  it('| head -1 ends predict quietly with exit 0', () => {
    const r = sh(`${span} predict ner --model ner --data g.conll --threads 1 | head -1; echo "\${PIPESTATUS[@]}"`)
    expect(r.stderr).toBe('')
    const [first, status] = r.stdout.trimEnd().split('\n')
    expect(first).toMatch(/^-DOCSTART- -X- O O [BIO]/)
    expect(status).toBe('0 0')
  })
})

describe('empty input and a bad line: one source:line line, non-zero exit, nothing written', () => {
  it('empty stdin: predict refuses it in one line; eval of no predictions names the count', () => {
    const p = sh(`${span} predict ner --model ner --data - --threads 1 | wc -c`)
    expect(p.code).toBe(1)
    expect(p.stdout.trim()).toBe('0')
    expect(p.stderr).toBe('span predict ner: stdin: no token lines (not a CoNLL file?)\n')
    const e = sh(`${span} eval nli --gold n.jsonl --pred -`)
    expect([e.code, e.stdout]).toEqual([1, ''])
    expect(e.stderr).toBe('span eval nli: stdin: 0 predictions for 6 labelled examples in n.jsonl (one per line, in order)\n')
  })

  it('SQuAD JSON given to eval mrqa is named, not "invalid JSON"', () => {
    file('squad.json', JSON.stringify({version: '1.1', data: [{title: 't', paragraphs: []}]}, null, 2))
    file('p.json', '{}')
    for (const data of ['squad.json', '- < squad.json']) {
      const r = sh(`${span} eval mrqa --data ${data} --pred p.json`)
      const name = data === 'squad.json' ? 'squad.json' : 'stdin'
      expect([r.code, r.stdout]).toEqual([1, ''])
      expect(r.stderr).toBe(
        `span eval mrqa: ${name}:1: one JSON object over several lines (SQuAD JSON: span finetune|predict|eval squad read it); expected one JSON object per line or a JSON list\n`,
      )
    }
  })

  it('nli: a bad JSON line in the middle of stdin stops predict before any output', () => {
    const r = sh(`sed '3s/.*/{"premise": 3/' n.jsonl | ${span} predict nli --model nli --data - --threads 1 | wc -l`)
    expect(r.code).toBe(1)
    expect(r.stdout.trim()).toBe('0')
    expect(r.stderr).toMatch(/^span predict nli: stdin:3: invalid JSON \(.*\n$/)
  })

  it('ner: a short line in the middle: one stdin:LINE line, exit 1, and -o leaves no file', () => {
    const r = sh(`sed '5s/.*/German JJ/' g.conll | ${span} predict ner --model ner --data - --threads 1 -o out.txt`)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('span predict ner: stdin:5: expected 4 columns as on the first token line, got 2\n')
    expect(existsSync(join(dir, 'out.txt'))).toBe(false)
  })
})
