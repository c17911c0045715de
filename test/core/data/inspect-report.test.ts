import {describe, expect, it} from 'vitest'
import {paint} from '../../../src/core/data/chart.js'
import {inspectRecords, type InspectOptions} from '../../../src/core/data/inspect.js'
import {formatReport} from '../../../src/core/data/inspect-report.js'
import {continuationTable} from '../../../src/core/data/inspect-spans.js'
import {EXAMPLE_A, EXAMPLE_B, SPECIAL, VOCAB, stream} from './inspect-fixtures.js'

const OPTS: InspectOptions = {
  kind: 'masked',
  kindFrom: 'header',
  special: SPECIAL,
  continuation: continuationTable(VOCAB),
  vocabSize: VOCAB.length,
  span: {p: 0.2, maxSpan: 10, from: 'header', scheme: 'span'},
}

describe('text report', () => {
  it('shows counts, lengths, masking and the paired span-length chart', async () => {
    const lines = formatReport(await inspectRecords('masked.ndjson', stream([EXAMPLE_A, EXAMPLE_B]), OPTS), paint(false))
    expect(lines[0]).toBe('span inspect: masked.ndjson  masked examples of span mask (from the header)')
    expect(lines).toContain('records           2')
    expect(lines).toContain('tokens            19  (13 without [CLS]/[SEP]/[PAD])')
    expect(lines).toContain('  min 7   mean 8.5   median 7   p95 10   max 10')
    expect(lines).toContain('  mask ratio      69.23%  (9 targets / 13 non-special tokens)')
    expect(lines).toContain('  spans           4  (2.00 per example)')
    expect(lines).toContain('  replacement     per span   mask 50.0%   random 25.0%   keep 25.0%')
    expect(lines).toContain('                  per token  mask 77.8%   random 11.1%   keep 11.1%')
    expect(lines).toContain('  span length     mean 1.75 words observed vs 3.80 theoretical  (mean 2.25 tokens per span)')
    expect(lines).toContain('span length in words: observed vs theoretical Geo(p = 0.2) clipped at 10 (from the header)')
    expect(lines.filter((l) => /^\s+(\d+|>10) {2}observed /.test(l))).toHaveLength(11)
    expect(lines.at(-1)).toBe(`       theory   ${' '.repeat(28)}   0.0%`)
  })

  it('labels one-value length bins without ranges', async () => {
    const lines = formatReport(await inspectRecords('x', stream([EXAMPLE_A, EXAMPLE_B]), OPTS), paint(false))
    expect(lines).toContain(`   7  ${'█'.repeat(28)} 1`)
    expect(lines).toContain(`  10  ${'█'.repeat(28)} 1`)
  })

  it('is a short report for an empty stream, and says when the kind was guessed', async () => {
    const empty = formatReport(await inspectRecords('stdin', stream([]), {...OPTS, kind: null, kindFrom: null}), paint(false))
    expect(empty).toEqual(['span inspect: stdin  (empty input)', '', 'records           0', 'tokens            0', 'documents         — (no doc field)'])
    const guessed = formatReport(await inspectRecords('stdin', stream([{doc: 0, ids: [5]}, {doc: 1, ids: [6, 7]}]), {...OPTS, kind: null, kindFrom: null}), paint(false))
    expect(guessed[0]).toBe('span inspect: stdin  token records of span tokenize (guessed from the record shape)')
    expect(guessed).toContain('documents         2')
    expect(guessed.join('\n')).not.toContain('masking')
  })

  it('refuses targets and spans that disagree instead of reporting on them', async () => {
    const ex = {ids: [2, 4, 4, 6, 3], targets: [[1, 5], [3, 6]], spans: [[1, 2, 'mask']]}
    await expect(inspectRecords('x', stream([ex]), OPTS)).rejects.toThrow('x:1: targets[1] at position 3 lies in no span')
  })
})
