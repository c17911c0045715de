/**
 * Relation examples as classifier inputs, as SpanBERT's run_tacred.py
 * (facebookresearch/SpanBERT@0670d8b6, code/run_tacred.py convert_examples_to_features) builds
 * them: `[CLS] sentence-with-markers [SEP]`, truncated to max-len, one segment.
 *   ner      the subject's and the object's words replaced by one typed marker each
 *            ([SUBJ-PERSON], [OBJ-CITY]); untyped ([SUBJ], [OBJ]) when the data has no types
 *   text     the words kept, with [SUBJ-START] .. [SUBJ-END] and [OBJ-START] .. [OBJ-END] around
 *   ner_text as ner, then `[SEP] subject words [SEP] object words [SEP]`
 * SpanBERT maps markers onto [unusedN] vocabulary slots; span gives each marker a new id after
 * the vocabulary (new embedding rows), recorded in the checkpoint's task config.
 */
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {RelationExample} from './read.js'
import {pushAll} from '../../util/arrays.js'

export type FeatureMode = 'ner' | 'text' | 'ner_text'
export const FEATURE_MODES: readonly FeatureMode[] = ['ner', 'text', 'ner_text']

export interface RelationFeature {
  ids: Int32Array
  label: number | null
}

/** Marker tokens and their ids: vocab size + k for the k-th new marker. */
export class MarkerVocab {
  readonly ids = new Map<string, number>()
  constructor(
    readonly base: number,
    markers: readonly string[] = [],
    private frozen = false,
    private readonly unk = 0,
  ) {
    for (const m of markers) this.ids.set(m, base + this.ids.size)
  }

  /** The id of a marker; new ones are added unless frozen (prediction: unknown markers are [UNK]). */
  id(marker: string): number {
    const got = this.ids.get(marker)
    if (got !== undefined) return got
    if (this.frozen) return this.unk
    this.ids.set(marker, this.base + this.ids.size)
    return this.base + this.ids.size - 1
  }

  freeze(): void {
    this.frozen = true
  }

  get list(): string[] {
    return [...this.ids.keys()]
  }
}

const typed = (role: 'SUBJ' | 'OBJ', type: string | null) => (type === null ? `[${role}]` : `[${role}-${type}]`)

/** One example's ids (before truncation) in the given mode. */
export function relationIds(ex: RelationExample, mode: FeatureMode, tok: WordPieceTokenizer, markers: MarkerVocab): number[] {
  const {cls, sep} = tok.vocab.special
  const ids = [cls]
  const inSpan = (i: number, [s, e]: [number, number]) => i >= s && i <= e
  if (mode === 'text') {
    ex.tokens.forEach((w, i) => {
      if (i === ex.subj[0]) ids.push(markers.id('[SUBJ-START]'))
      if (i === ex.obj[0]) ids.push(markers.id('[OBJ-START]'))
      pushAll(ids, tok.encode(w))
      if (i === ex.subj[1]) ids.push(markers.id('[SUBJ-END]'))
      if (i === ex.obj[1]) ids.push(markers.id('[OBJ-END]'))
    })
    return [...ids, sep]
  }
  const subj: number[] = []
  const obj: number[] = []
  ex.tokens.forEach((w, i) => {
    if (i === ex.subj[0]) ids.push(markers.id(typed('SUBJ', ex.subjType)))
    if (i === ex.obj[0]) ids.push(markers.id(typed('OBJ', ex.objType)))
    if (inSpan(i, ex.subj)) pushAll(subj, tok.encode(w))
    else if (inSpan(i, ex.obj)) pushAll(obj, tok.encode(w))
    else pushAll(ids, tok.encode(w))
  })
  if (mode === 'ner_text') pushAll(ids, [sep], subj, [sep], obj)
  return [...ids, sep]
}

/** The classifier input of one example: truncated to maxLen, with its label number (or null). */
export function relationFeature(
  ex: RelationExample,
  mode: FeatureMode,
  tok: WordPieceTokenizer,
  markers: MarkerVocab,
  maxLen: number,
  labels: readonly string[],
): RelationFeature {
  const ids = relationIds(ex, mode, tok, markers).slice(0, maxLen)
  return {ids: Int32Array.from(ids), label: ex.relation === null ? null : labels.indexOf(ex.relation)}
}
