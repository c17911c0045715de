import {describe, expect, it} from 'vitest'
import {WordCounter, learnWordPiece} from '../../../src/core/text/vocab-learn.js'
import {SPECIAL_TOKENS} from '../../../src/core/text/vocab.js'

/** Greedy longest-match-first WordPiece (BERT's WordpieceTokenizer), the consumer of the vocab. */
function wordpiece(word: string, vocab: Set<string>): string[] | null {
  const out: string[] = []
  let start = 0
  while (start < word.length) {
    let end = word.length
    let piece: string | null = null
    for (; end > start; end--) {
      const cand = (start > 0 ? '##' : '') + word.slice(start, end)
      if (vocab.has(cand)) {
        piece = cand
        break
      }
    }
    if (piece === null) return null
    out.push(piece)
    start = end
  }
  return out
}

const toy = new Map([
  ['hug', 10],
  ['pug', 5],
  ['pun', 12],
  ['bun', 4],
  ['hugs', 5],
])

describe('learnWordPiece', () => {
  it('puts the special tokens first, then the alphabet, then merges by frequency', () => {
    const vocab = learnWordPiece(toy, {size: 100, minFrequency: 1})
    expect(vocab.slice(0, 5)).toEqual([...SPECIAL_TOKENS])
    // alphabet: word-initial characters bare, the others with ##, each sorted
    expect(vocab.slice(5, 12)).toEqual(['b', 'h', 'p', '##g', '##n', '##s', '##u'])
    // hand-computed BPE order: ##u+##g (10+5+5 = 20), ##u+##n (12+4 = 16), h+##ug (10+5 = 15),
    // p+##un (12), then the ties at 5 (hug+##s, p+##ug) in string order: hugs before pug
    expect(vocab.slice(12, 18)).toEqual(['##ug', '##un', 'hug', 'pun', 'hugs', 'pug'])
  })

  it('stops at the requested size exactly', () => {
    const vocab = learnWordPiece(toy, {size: 14, minFrequency: 1})
    expect(vocab).toHaveLength(14)
    expect(vocab.at(-1)).toBe('##un')
  })

  it('stops when no pair reaches the minimum frequency', () => {
    const vocab = learnWordPiece(toy, {size: 100, minFrequency: 16})
    expect(vocab.slice(12)).toEqual(['##ug', '##un'])
  })

  it('is deterministic and tokenizes every counted word without [UNK]', () => {
    const counter = new WordCounter()
    const text = 'the quick brown fox jumps over the lazy dog while the dogs sleep and foxes jump quickly'
    for (let i = 0; i < 5; i++) counter.add(text.split(' '))
    counter.add(['zebra', 'quizzical', 'jumper'])
    const a = learnWordPiece(counter.counts, {size: 60, minFrequency: 2})
    const b = learnWordPiece(new Map([...counter.counts].reverse()), {size: 60, minFrequency: 2})
    expect(a).toEqual(b)
    expect(new Set(a).size).toBe(a.length)
    const set = new Set(a)
    for (const w of counter.counts.keys()) expect(wordpiece(w, set), w).not.toBeNull()
  })

  it('keeps rare characters out when the alphabet is limited', () => {
    const vocab = learnWordPiece(new Map([['aaa', 10], ['ab', 1], ['é', 1]]), {size: 50, minFrequency: 1, limitAlphabet: 1})
    expect(vocab).not.toContain('é')
    expect(vocab).toContain('a')
    expect(vocab).toContain('##a')
  })
})
