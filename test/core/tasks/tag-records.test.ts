import {describe, expect, it} from 'vitest'
import {NUMERIC_LABELS, chunks, numericEntity} from '../../../src/core/tasks/ner/tag-records.js'

describe('span tag: chunks of word tags (conlleval reading) and numeric mentions', () => {
  it('B- opens a chunk, I- continues one of its type, and I- after O or another type opens one', () => {
    expect(chunks(['B-PER', 'I-PER', 'O', 'B-LOC', 'B-LOC', 'I-ORG', 'I-ORG', 'I-PER'])).toEqual([
      [0, 1, 'PER'],
      [3, 3, 'LOC'],
      [4, 4, 'LOC'],
      [5, 6, 'ORG'],
      [7, 7, 'PER'],
    ])
    expect(chunks(['O', 'O'])).toEqual([])
    expect(chunks(['I-NP', 'I-NP', 'B-NP'])).toEqual([
      [0, 1, 'NP'],
      [2, 2, 'NP'],
    ])
  })

  it("numeric: spaCy's numeric labels, or a mention without a letter", () => {
    const tokens = ['1996', '3', '-', '##1', 'Paris', '##ian', '[UNK]', 'é']
    for (const l of NUMERIC_LABELS) expect(numericEntity(l, [4], tokens)).toBe(true)
    expect(numericEntity('MISC', [0], tokens)).toBe(true)
    expect(numericEntity('MISC', [1, 2, 3], tokens)).toBe(true)
    expect(numericEntity('LOC', [4, 5], tokens)).toBe(false)
    expect(numericEntity('MISC', [0, 4], tokens)).toBe(false)
    expect(numericEntity('PER', [7], tokens)).toBe(false)
    expect(numericEntity('PER', [6], tokens)).toBe(false) // [UNK]: a word we cannot read, not a number
  })
})
