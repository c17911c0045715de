/**
 * Test data for the data-stage tests: WikiText-2 (valid) from ../shared/data, tokenized with the
 * cased BERT vocabulary and packed into blocks. Never copied into the repository. Without it the
 * suites are skipped (describeData) and `vocab` is the fixtures' vocabulary, so importing never throws.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {BlockPacker, type Block} from '../../../src/core/data/block.js'
import {Masker, maskVocab, type MaskOptions, type MaskResult} from '../../../src/core/data/mask.js'
import {Unigram} from '../../../src/core/data/unigram.js'
import type {TokenRecord} from '../../../src/core/data/records.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab, type Vocab} from '../../../src/core/text/vocab.js'
import {SHARED_DATA, describeShared, missingShared} from '../../helpers/shared-data.js'

export const SHARED = SHARED_DATA
export const WIKI_VALID = join(SHARED, 'wikitext', 'wikitext-2.valid.txt')
export const VOCAB_PATH = join(SHARED, 'vocab', 'bert-base-cased.txt')

const NEEDS = ['wikitext/wikitext-2.valid.txt', 'vocab/bert-base-cased.txt']
/** describe for suites that read WikiText-2 or the cased vocabulary: skipped with the reason when absent. */
export const describeData = describeShared(...NEEDS)
export const hasData = missingShared(...NEEDS) === null

export const vocab: Vocab = loadVocab(hasData ? VOCAB_PATH : join(import.meta.dirname, '..', '..', '..', 'fixtures', 'vocab.txt'))

/** The project's BERT tokenizer (cased, as the vocabulary). */
const tokenizer = new WordPieceTokenizer(vocab, {lowercase: false})
export const encode: (text: string) => number[] = (text) => tokenizer.encode(text)

/** Token records of WikiText-2 valid: one per non-blank line; a ` = Title = ` line starts a document. */
export function wikiRecords(): TokenRecord[] {
  const recs: TokenRecord[] = []
  let doc = -1
  for (const line of readFileSync(WIKI_VALID, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    if (/^ = [^=].* = $/.test(line) || doc < 0) doc++
    recs.push({doc, ids: encode(line)})
  }
  return recs
}

export function wikiBlocks(len: number): Block[] {
  const packer = new BlockPacker(len, vocab.special.cls, vocab.special.sep)
  const blocks = wikiRecords().flatMap((r) => packer.push(r))
  return blocks.concat(packer.finish())
}

export const mv = maskVocab(vocab.tokens, vocab.special)

/** A masker whose unigram counts are those of `blocks`. */
export function masker(opts: MaskOptions, blocks: {ids: number[]}[]): Masker {
  const unigram = new Unigram(mv.special)
  for (const b of blocks) unigram.add(b.ids)
  return new Masker(opts, mv, unigram)
}

export const maskable = (ids: number[]) => ids.filter((id) => mv.special[id] === 0).length
export const isWordStart = (ids: number[], i: number) => mv.cont[ids[i]] === 0 || mv.special[ids[i - 1]] === 1
export const isWordEnd = (ids: number[], i: number) => i + 1 >= ids.length || mv.special[ids[i + 1]] === 1 || mv.cont[ids[i + 1]] === 0

/**
 * Checks everything a masked example promises about its targets and spans: spans in order and
 * disjoint, every masked position a target with its original id, never a special token, and the
 * span's decision applied to all its tokens. Returns the decisions; pushes problems to `bad`.
 */
export function checkExample(ids: number[], res: MaskResult, bad: string[]): number[] {
  const targets = new Map<number, number>()
  for (let i = 0; i < res.targets.length; i += 2) targets.set(res.targets[i], res.targets[i + 1])
  let covered = 0
  let prevEnd = -1
  const decisions: number[] = []
  for (let k = 0; k < res.spans.length; k += 3) {
    const [s, e, d] = [res.spans[k], res.spans[k + 1], res.spans[k + 2]]
    if (s <= prevEnd || e < s) bad.push(`span ${s}-${e} overlaps or is out of order`)
    prevEnd = e
    decisions.push(d)
    for (let i = s; i <= e; i++) {
      if (targets.get(i) !== ids[i]) bad.push(`position ${i}: target ${targets.get(i)}, original ${ids[i]}`)
      if (mv.special[ids[i]] === 1) bad.push(`special token ${ids[i]} masked at ${i}`)
      if (d === 0 && res.ids[i] !== vocab.special.mask) bad.push(`mask span with ${res.ids[i]} at ${i}`)
      if (d === 1 && mv.special[res.ids[i]] === 1) bad.push(`special token ${res.ids[i]} drawn at ${i}`)
      if (d === 2 && res.ids[i] !== ids[i]) bad.push(`keep span changed ${i}`)
    }
    covered += e - s + 1
  }
  if (covered !== targets.size) bad.push(`${targets.size} targets, ${covered} positions in spans`)
  for (let i = 0; i < ids.length; i++) if (!targets.has(i) && res.ids[i] !== ids[i]) bad.push(`unmasked ${i} changed`)
  return decisions
}
