// `span finetune glue --span-ft` options as a user runs them (dist/ must be built), on a handful
// of hand-made SST-2 rows with a tiny fresh model: the reference's JSON dictionary with random
// segmentation, pooled [CLS] and padding 1; the "+ CNN" ablation without a dictionary; predict glue
// reads each back; flag combinations that make no sense are one-line usage errors (exit 2).
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-glue-sf-cmd-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const rows = ['the old man walked', 'a very good film', 'the river is cold', 'a bad film', 'the old man saw the river', 'good fun']
const tsv = file('train.tsv', 'sentence\tlabel\n' + rows.map((r, i) => `${r}\t${i % 2}`).join('\n') + '\n')
const base = ['finetune', 'glue', '--task', 'sst2', '--preset', 'tiny', '--train', tsv, '--dev', tsv, '--epochs', '1', '--batch-size', '3', '--threads', '1']
const small = [...base, '--max-len', '16']
const config = (out: string) => JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))

describe('finetune glue --span-ft options → predict glue', () => {
  it('JSON dictionary, --segmentation random, --span-ft-cls pooled, --span-ft-padding 1, --span-ft-truncation reference', () => {
    const d = file('d.json', JSON.stringify({'the old man': 20, 'the river': 11}) + '\n')
    const out = join(dir, 'random')
    const r = runSpan([
      ...small,
      '--span-ft',
      '--dict',
      d,
      '--segmentation',
      'random',
      '--span-ft-cls',
      'pooled',
      '--span-ft-padding',
      '1',
      '--span-ft-truncation',
      'reference',
      '--out',
      out,
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/"span-ft-defaults":"reference"/)
    expect(config(out).span_ft).toEqual({
      max_spans: 64,
      max_span_tokens: 16,
      padding: 1,
      pool: 'reference',
      cls: 'pooled',
      segmentation: 'random',
      level: 'sentence',
      truncation: 'reference',
    })
    const pr = runSpan(['predict', 'glue', '--model', out, '--data', tsv, '--threads', '1'])
    expect(pr.code, pr.stderr).toBe(0)
    expect(pr.stdout.trim().split('\n')).toHaveLength(rows.length + 1)
  })

  it('--segmentation none needs no dictionary: r 1, l = --max-len; predict glue runs it', () => {
    const out = join(dir, 'none')
    const r = runSpan([...small, '--span-ft', '--segmentation', 'none', '--span-ft-defaults', 'paper', '--out', out])
    expect(r.code, r.stderr).toBe(0)
    expect(config(out).span_ft).toMatchObject({max_spans: 1, max_span_tokens: 16, padding: 0, cls: 'raw', segmentation: 'none'})
    const pr = runSpan(['predict', 'glue', '--model', out, '--data', tsv, '--threads', '1'])
    expect(pr.code, pr.stderr).toBe(0)
  })

  it.each([
    [['--span-ft'], '--span-ft needs --dict (or --segmentation none)'],
    [['--span-ft', '--segmentation', 'none', '--dict', tsv], '--segmentation none uses no --dict'],
    [['--span-ft', '--segmentation', 'none', '--max-len', '4'], '--segmentation none needs --max-len ≥ 5 with --span-ft-padding 0'],
    [['--span-ft', '--dict', tsv, '--max-span-tokens', '2'], '--max-spans must be ≥ 4 and --max-span-tokens ≥ 3 with --span-ft-padding 0'],
  ])('%j is a usage error', (args, msg) => {
    const r = runSpan([...(args.includes('--max-len') ? base : small), ...args, '--out', join(dir, 'never')])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`span finetune glue: ${msg}\n`)
  })
})
