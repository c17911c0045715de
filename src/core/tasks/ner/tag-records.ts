/**
 * `span tag`'s core: a fine-tuned token classifier (span finetune ner) over the ids of token
 * records or blocks, its word-level IOB2 predictions turned into tags over sub-tokens
 * (docs/formats.md#tags). Words are read off the ids as WordPiece made them (a word is a token
 * that is not a `##` piece, with the pieces after it); each run of non-special ids is one
 * "sentence", windowed and read exactly as `span predict ner` does (nerWindows, predictWordTags).
 */
import type {BertForTokenClassification} from '../../model/token-classifier.js'
import type {Tag} from '../../data/tags.js'
import {nerWindows, type NerFeature} from './features.js'
import {predictWordTags} from './train.js'
import {pushAll} from '../../util/arrays.js'

/** spaCy's numeric entity labels, which SpanBERT §5 drops ("non-numerical named entity mentions"). */
export const NUMERIC_LABELS: readonly string[] = ['DATE', 'TIME', 'PERCENT', 'MONEY', 'QUANTITY', 'ORDINAL', 'CARDINAL']

export interface TaggerOptions {
  labels: string[] // the model's labels (IOB2)
  keep: ((label: string) => boolean) | null // --labels; null keeps every label
  dropNumeric: boolean // drop numeric entities (numericEntity); never NP chunks (the paper drops numeric entities only)
  maxLen: number
  stride: number
  batchSize: number
  special: {cls: number; sep: number; pad: number}
  specialTable: Uint8Array // 1: never part of a word ([CLS], [SEP], [PAD], [MASK], …)
  cont: Uint8Array // 1: a `##` piece
  tokens: readonly string[] // the vocabulary's strings (numericEntity reads them)
}

/** A sentence of a record: its first position in the record's ids and its words' first positions (relative). */
interface Piece {
  record: number
  offset: number
  ids: number[]
  first: number[]
}

export class RecordTagger {
  numericDropped = 0
  filteredOut = 0

  constructor(
    private readonly model: BertForTokenClassification,
    private readonly o: TaggerOptions,
  ) {}

  /** The tags of each record (ends inclusive, sorted, never overlapping). */
  async tag(records: readonly (readonly number[])[]): Promise<Tag[][]> {
    const pieces = records.flatMap((ids, r) => this.pieces(ids, r))
    const units: NerFeature[] = pieces.flatMap((p, k) => nerWindows(p.ids, p.first, null, k, this.o.special, this.o.maxLen, this.o.stride))
    const words = await predictWordTags(
      this.model,
      pieces.map((p) => p.first.length),
      units,
      this.o.labels,
      this.o.batchSize,
      this.o.special.pad,
    )
    const out: Tag[][] = records.map(() => [])
    pieces.forEach((p, k) => pushAll(out[p.record], this.tagsOf(p, words[k])))
    return out
  }

  /** Runs of non-special ids, with their word starts. */
  private pieces(ids: readonly number[], record: number): Piece[] {
    const out: Piece[] = []
    let cur: Piece | null = null
    ids.forEach((id, i) => {
      if (this.o.specialTable[id] === 1) return void (cur = null)
      if (!cur) out.push((cur = {record, offset: i, ids: [], first: []}))
      if (this.o.cont[id] === 0 || cur.ids.length === 0) cur.first.push(cur.ids.length)
      cur.ids.push(id)
    })
    return out
  }

  /** Chunks of the word tags as tags over the record's ids: first sub-token of the first word to the last of the last. */
  private tagsOf(p: Piece, iob2: string[]): Tag[] {
    const out: Tag[] = []
    for (const [a, b, label] of chunks(iob2)) {
      const start = p.offset + p.first[a]
      const end = p.offset + (b + 1 < p.first.length ? p.first[b + 1] : p.ids.length) - 1
      if (this.o.keep && !this.o.keep(label)) this.filteredOut++
      else if (this.o.dropNumeric && label !== 'NP' && numericEntity(label, p.ids.slice(start - p.offset, end - p.offset + 1), this.o.tokens))
        this.numericDropped++
      else out.push([start, end, label])
    }
    return out
  }
}

/**
 * Chunks of IOB2 tags as conlleval reads them: a chunk starts at B-X, or at I-X after O or
 * another type, and runs while I-X follows. [firstWord, lastWord, X].
 */
export function chunks(tags: readonly string[]): [number, number, string][] {
  const out: [number, number, string][] = []
  tags.forEach((t, i) => {
    if (t === 'O') return
    const type = t.slice(2)
    const last = out.at(-1)
    if (t.startsWith('I-') && last && last[1] === i - 1 && last[2] === type) last[1] = i
    else out.push([i, i, type])
  })
  return out
}

/**
 * "Numeric" (SpanBERT §5 keeps "non-numerical named entity mentions"): one of spaCy's numeric
 * labels (NUMERIC_LABELS), or, for taggers without them (CoNLL-2003's PER/ORG/LOC/MISC), a mention
 * whose text has no letter at all ("1996", "3-1", "1,000").
 */
export function numericEntity(label: string, ids: readonly number[], tokens: readonly string[]): boolean {
  if (NUMERIC_LABELS.includes(label)) return true
  return !ids.some((id) => /\p{L}/u.test(tokens[id].replace(/^##/, '')))
}
