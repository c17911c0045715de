import {SPECIAL_TOKENS} from './vocab.js'

/**
 * WordPiece vocabulary learning, as Hugging Face's `WordPieceTrainer` does it (a BPE trainer
 * with the `##` continuing-subword prefix): start from the characters of the words (a word's
 * first character bare, the others as `##c`), then repeatedly add the merge of the most frequent
 * adjacent pair until the vocabulary has `size` entries or no pair occurs `minFrequency` times.
 * Ties go to the pair whose merged string sorts first, so the result is deterministic.
 */
export interface LearnOptions {
  size: number
  minFrequency: number
  /** At most this many distinct characters (the most frequent) seed the alphabet; rarer ones become [UNK]. */
  limitAlphabet?: number
}

/** Counts words (the BasicTokenizer's output); bounded by the number of distinct words. */
export class WordCounter {
  readonly counts = new Map<string, number>()

  add(words: Iterable<string>): void {
    for (const w of words) this.counts.set(w, (this.counts.get(w) ?? 0) + 1)
  }
}

interface Word {
  pieces: number[] // symbol ids
  count: number
}

export function learnWordPiece(counts: Map<string, number>, opts: LearnOptions): string[] {
  const symbols = new SymbolTable()
  const alphabet = chooseAlphabet(counts, opts.limitAlphabet ?? 1000)
  const words = splitWords(counts, alphabet, symbols)
  const vocab: string[] = [...SPECIAL_TOKENS, ...symbols.sortedAlphabet()]
  if (vocab.length >= opts.size) return vocab.slice(0, Math.max(opts.size, SPECIAL_TOKENS.length))
  const merger = new PairMerger(words, symbols)
  while (vocab.length < opts.size) {
    const best = merger.best(opts.minFrequency)
    if (best === null) break
    vocab.push(merger.merge(best))
  }
  return vocab
}

/** The most frequent characters, counted over word occurrences. */
function chooseAlphabet(counts: Map<string, number>, limit: number): Set<string> {
  const chars = new Map<string, number>()
  for (const [w, c] of counts) for (const ch of w) chars.set(ch, (chars.get(ch) ?? 0) + c)
  const ranked = [...chars].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))
  return new Set(ranked.slice(0, limit).map(([ch]) => ch))
}

function splitWords(counts: Map<string, number>, alphabet: Set<string>, symbols: SymbolTable): Word[] {
  const words: Word[] = []
  for (const [w, count] of counts) {
    const chars = [...w]
    if (chars.some((ch) => !alphabet.has(ch))) continue // would be [UNK] whole
    if (chars.length > 100) continue // WordPiece maps such words to [UNK]
    const pieces = chars.map((ch, i) => symbols.id(i === 0 ? ch : `##${ch}`, true))
    words.push({pieces, count})
  }
  return words
}

class SymbolTable {
  readonly names: string[] = []
  private readonly index = new Map<string, number>()
  private readonly alphabetIds: number[] = []

  id(name: string, alphabet = false): number {
    let id = this.index.get(name)
    if (id === undefined) {
      id = this.names.length
      this.names.push(name)
      this.index.set(name, id)
      if (alphabet) this.alphabetIds.push(id)
    }
    return id
  }

  /** Alphabet entries in a stable order: bare characters first, then `##` ones, each sorted. */
  sortedAlphabet(): string[] {
    const names = this.alphabetIds.map((i) => this.names[i])
    const bare = names.filter((n) => !n.startsWith('##')).sort(cmp)
    const cont = names.filter((n) => n.startsWith('##')).sort(cmp)
    return [...bare, ...cont]
  }
}

/** Code-unit order, the same on every machine (localeCompare is not). */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Merged name of two symbols: `a` + `b` without b's `##`. */
function joinNames(a: string, b: string): string {
  return a + (b.startsWith('##') ? b.slice(2) : b)
}

type PairKey = number // left * 2^21 + right (symbol ids stay well below 2^21 in practice)
const SHIFT = 2 ** 21

/**
 * Pair counts with, for each pair, the words it occurs in; a max-heap with lazy invalidation
 * picks the best pair in O(log n) and a merge touches only the words containing it.
 */
class PairMerger {
  private readonly pairCount = new Map<PairKey, number>()
  private readonly pairWords = new Map<PairKey, Set<number>>()
  private readonly heap: Heap

  constructor(private readonly words: Word[], private readonly symbols: SymbolTable) {
    words.forEach((w, wi) => this.countWord(w, wi, +1))
    this.heap = new Heap((a, b) => this.better(a, b))
    for (const [key, c] of this.pairCount) this.heap.push({key, count: c})
  }

  /** The most frequent pair with at least `min` occurrences, or null. */
  best(min: number): PairKey | null {
    for (;;) {
      const top = this.heap.pop()
      if (top === undefined) return null
      const now = this.pairCount.get(top.key) ?? 0
      if (now !== top.count) {
        if (now > 0) this.heap.push({key: top.key, count: now})
        continue
      }
      return now >= min ? top.key : null
    }
  }

  /** Applies a merge to every word containing it; returns the new symbol's name. */
  merge(key: PairKey): string {
    const [a, b] = [Math.floor(key / SHIFT), key % SHIFT]
    const name = joinNames(this.symbols.names[a], this.symbols.names[b])
    const merged = this.symbols.id(name)
    const touched = new Set<PairKey>()
    for (const wi of this.pairWords.get(key) ?? []) {
      const w = this.words[wi]
      this.countWord(w, wi, -1)
      w.pieces = mergeInWord(w.pieces, a, b, merged)
      this.countWord(w, wi, +1, touched)
    }
    this.pairCount.delete(key)
    this.pairWords.delete(key)
    for (const k of touched) {
      const c = this.pairCount.get(k) ?? 0
      if (c > 0) this.heap.push({key: k, count: c})
    }
    return name
  }

  private countWord(w: Word, wi: number, sign: 1 | -1, touched?: Set<PairKey>): void {
    for (let i = 0; i + 1 < w.pieces.length; i++) {
      const k = w.pieces[i] * SHIFT + w.pieces[i + 1]
      this.pairCount.set(k, (this.pairCount.get(k) ?? 0) + sign * w.count)
      if (sign > 0) {
        let set = this.pairWords.get(k)
        if (!set) this.pairWords.set(k, (set = new Set()))
        set.add(wi)
        touched?.add(k)
      }
    }
  }

  private better(x: HeapItem, y: HeapItem): boolean {
    if (x.count !== y.count) return x.count > y.count
    return cmp(this.pairName(x.key), this.pairName(y.key)) < 0
  }

  private pairName(key: PairKey): string {
    return joinNames(this.symbols.names[Math.floor(key / SHIFT)], this.symbols.names[key % SHIFT])
  }
}

function mergeInWord(pieces: number[], a: number, b: number, merged: number): number[] {
  const out: number[] = []
  for (let i = 0; i < pieces.length; i++) {
    if (i + 1 < pieces.length && pieces[i] === a && pieces[i + 1] === b) {
      out.push(merged)
      i++
    } else out.push(pieces[i])
  }
  return out
}

interface HeapItem {
  key: PairKey
  count: number
}

/** A binary heap ordered by `before`. */
class Heap {
  private readonly items: HeapItem[] = []

  constructor(private readonly before: (a: HeapItem, b: HeapItem) => boolean) {}

  push(item: HeapItem): void {
    const it = this.items
    it.push(item)
    let i = it.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(it[i], it[parent])) break
      ;[it[i], it[parent]] = [it[parent], it[i]]
      i = parent
    }
  }

  pop(): HeapItem | undefined {
    const it = this.items
    if (it.length === 0) return undefined
    const top = it[0]
    const last = it.pop() as HeapItem
    if (it.length > 0) {
      it[0] = last
      this.siftDown(0)
    }
    return top
  }

  private siftDown(i: number): void {
    const it = this.items
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < it.length && this.before(it[l], it[m])) m = l
      if (r < it.length && this.before(it[r], it[m])) m = r
      if (m === i) return
      ;[it[i], it[m]] = [it[m], it[i]]
      i = m
    }
  }
}
