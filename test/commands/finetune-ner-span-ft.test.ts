// `span finetune ner --span-ft` as a user runs it (dist/ must be built): a tiny model trains a
// step with the token-level span CNN, saves config.json (span_ft) and the dictionary beside it,
// and `span predict ner` loads and runs it; a bad dictionary line is a one-line source:line error.
import {mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-ner-sf-cmd-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const conll =
  '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n'
const base = [
  'finetune',
  'ner',
  '--preset',
  'tiny',
  '--epochs',
  '1',
  '--max-len',
  '16',
  '--threads',
  '1',
  '--span-ft',
  '--max-spans',
  '8',
  '--max-span-tokens',
  '4',
]

describe('finetune ner --span-ft → predict ner', () => {
  it('trains, saves span_ft and the dictionary, and predict ner runs the model', () => {
    const g = file('ner.conll', conll)
    const d = file('d.json', JSON.stringify({'german call': 12, 'peter blackburn': 11}) + '\n')
    const out = join(dir, 'run')
    const r = runSpan([...base, '--train', g, '--dev', g, '--dict', d, '--out', out])
    expect(r.code, r.stderr).toBe(0)
    expect(readdirSync(join(out, 'best'))).toEqual(expect.arrayContaining(['model.safetensors', 'span_ft_ngrams.txt', 'config.json']))
    const cfg = JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))
    expect(cfg.span_ft).toMatchObject({max_spans: 8, max_span_tokens: 4, padding: 1, level: 'token'})
    const pr = runSpan(['predict', 'ner', '--model', out, '--data', g, '--threads', '1'])
    expect(pr.code, pr.stderr).toBe(0)
    expect(pr.stdout.split('\n')[2]).toMatch(/^EU NNP I-NP I-ORG [IBO]/)
  })

  it('a bad dictionary line is span finetune ner: source:line: message, exit 1', () => {
    const g = file('ner2.conll', conll)
    const d = file('bad.tsv', 'german call\t12\npeter blackburn\tmany\n')
    const r = runSpan([...base, '--train', g, '--dict', d, '--out', join(dir, 'never')])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^span finetune ner: .*bad\.tsv:2: /)
  })
})
