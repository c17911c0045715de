// `span finetune nli --span-ft` as a user runs it (dist/ must be built): a tiny fresh model trains a
// step on hand-made SNLI rows with the sentence-pair span CNN (SNLI's reference defaults r 128,
// l 16), saves span_ft and the dictionary beside the model, and `span predict nli` loads and runs it;
// a plain run stays plain; flag combinations that make no sense are usage errors (exit 2).
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {SPAN_FT_DICT_FILE} from '../../src/core/model/span-index.js'

const dir = mkdtempSync(join(tmpdir(), 'span-nli-sf-cmd-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const pairs = [
  ['the old man walked by the river', 'a man walked', 'entailment'],
  ['the old man walked by the river', 'nobody walked', 'contradiction'],
  ['a very good film', 'the film was long', 'neutral'],
  ['the river is cold', 'the river is warm', 'contradiction'],
  ['the old man saw the river', 'a man saw water', 'entailment'],
  ['good fun', 'it was -', '-'],
]
const jsonl = file('snli.jsonl', pairs.map(([a, b, l]) => JSON.stringify({sentence1: a, sentence2: b, gold_label: l})).join('\n') + '\n')
const dict = file('ngrams.txt', 'the old man\t20\nthe river\t11\n')
const base = [
  'finetune',
  'nli',
  '--preset',
  'tiny',
  '--train',
  jsonl,
  '--dev',
  jsonl,
  '--epochs',
  '1',
  '--batch-size',
  '3',
  '--max-len',
  '24',
  '--threads',
  '1',
]
const config = (out: string) => JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))

describe('finetune nli --span-ft → predict nli', () => {
  it("trains with SNLI's reference r and l, saves span_ft and the dictionary; predict nli runs the model", () => {
    const out = join(dir, 'sf')
    const r = runSpan([...base, '--span-ft', '--dict', dict, '--out', out])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/"span-ft":true,"dict":"[^"]+","max-spans":128,"max-span-tokens":16/)
    expect(r.stderr).toMatch(/Span Fine-tuning adds \d+/)
    expect(r.stdout).toMatch(/"split":"dev".*"accuracy"/)
    expect(config(out).span_ft).toEqual({
      max_spans: 128,
      max_span_tokens: 16,
      padding: 0,
      pool: 'reference',
      cls: 'raw',
      segmentation: 'dict',
      level: 'sentence',
      truncation: 'bert',
    })
    expect(readFileSync(join(out, 'best', SPAN_FT_DICT_FILE), 'utf8')).toBe(readFileSync(dict, 'utf8'))
    const pr = runSpan(['predict', 'nli', '--model', out, '--data', jsonl, '--threads', '1'])
    expect(pr.code, pr.stderr).toBe(0)
    const labels = pr.stdout.trim().split('\n')
    expect(labels).toHaveLength(pairs.length - 1) // the "-" row is dropped
    for (const l of labels) expect(['entailment', 'neutral', 'contradiction']).toContain(l)
  })

  it('the paper defaults, random segmentation, pooled [CLS]; a plain run has no span_ft and no dictionary', () => {
    const out = join(dir, 'paper')
    const r = runSpan([
      ...base,
      '--span-ft',
      '--dict',
      dict,
      '--span-ft-defaults',
      'paper',
      '--segmentation',
      'random',
      '--span-ft-cls',
      'pooled',
      '--out',
      out,
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(config(out).span_ft).toMatchObject({max_spans: 16, max_span_tokens: 64, cls: 'pooled', segmentation: 'random'})
    expect(runSpan(['predict', 'nli', '--model', out, '--data', jsonl, '--threads', '1']).code).toBe(0)
    const plain = join(dir, 'plain')
    expect(runSpan([...base, '--out', plain]).code).toBe(0)
    expect(config(plain).span_ft ?? null).toBeNull()
    expect(existsSync(join(plain, 'best', SPAN_FT_DICT_FILE))).toBe(false)
  })

  it('a resumed run keeps its Span Fine-tuning: another --max-spans, or another --span-ft-cls, is a one-line error (exit 2)', () => {
    const out = join(dir, 'sf') // the first test's run
    const other = runSpan([...base, '--span-ft', '--dict', dict, '--max-spans', '10', '--resume', out, '--out', join(dir, 'x1')])
    expect(other.code).toBe(2)
    expect(other.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/--max-spans 10 differs from the run in .* \(128\); leave it out to continue the run as it was$/),
    ])
    const cls = runSpan([...base, '--span-ft-cls', 'pooled', '--resume', out, '--out', join(dir, 'x2')]) // --span-ft and --dict: the saved ones
    expect(cls.code).toBe(2)
    expect(cls.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/--span-ft-cls "pooled" differs from the run in .* \("raw"\)/)])
  })

  it('--dict without --span-ft, and --span-ft without a dictionary, are usage errors', () => {
    for (const extra of [['--dict', dict], ['--span-ft']]) {
      const r = runSpan([...base, ...extra, '--out', join(dir, 'bad')])
      expect(r.code).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/^span finetune nli: .*--(dict|span-ft)/)
    }
  })
})
