import {errorAt} from './errors.js'
import type {Rec} from './ndjson.js'

/** What kind of records follow a header: the output of each stage. */
export type StageKind = 'tokens' | 'blocks' | 'masked'

export const PRODUCER: Record<StageKind, string> = {
  tokens: 'span tokenize',
  blocks: 'span block',
  masked: 'span mask',
}

export interface SpecialIds {
  pad: number
  unk: number
  cls: number
  sep: number
  mask: number
}

export interface VocabInfo {
  path: string // absolute (a relative one, of an older span, is taken from the current directory)
  sha256: string // of the file's bytes
  size: number // number of entries
}

export interface HistoryEntry {
  stage: string // `tokenize`, `block`, ...
  version: string // span's version
  flags: Record<string, unknown>
}

/** The first record of every stream (docs/formats.md#header-record). No timestamps: output is reproducible. */
export interface Header {
  span: 'header'
  kind: StageKind
  vocab: VocabInfo | null
  cased: boolean | null
  special: SpecialIds | null
  history: HistoryEntry[]
}

export function isHeader(rec: Rec): boolean {
  return rec.value.span === 'header'
}

/** Validates a header record read from `source` at its line. */
export function parseHeader(rec: Rec, source: string): Header {
  const v = rec.value
  const bad = (msg: string) => errorAt(source, rec.line, `bad header record: ${msg}`)
  if (typeof v.kind !== 'string' || !(v.kind in PRODUCER)) throw bad(`unknown kind ${JSON.stringify(v.kind)}`)
  if (!Array.isArray(v.history)) throw bad('history must be an array')
  const special = v.special as SpecialIds | null | undefined
  const size = (v.vocab as VocabInfo | null | undefined)?.size
  if (special != null) {
    for (const k of ['pad', 'unk', 'cls', 'sep', 'mask'] as const) {
      if (!Number.isInteger(special[k])) throw bad(`special.${k} must be an integer id`)
      if (special[k] < 0 || (Number.isInteger(size) && special[k] >= (size as number)))
        throw bad(`special.${k} = ${special[k]} is outside the vocabulary (size ${size ?? '?'})`)
    }
  }
  return {
    span: 'header',
    kind: v.kind as StageKind,
    vocab: (v.vocab as VocabInfo | null | undefined) ?? null,
    cased: typeof v.cased === 'boolean' ? v.cased : null,
    special: special ?? null,
    history: v.history as HistoryEntry[],
  }
}

/** The header a stage writes: the one it read (if any), re-kinded, with itself appended. */
export function nextHeader(prev: Header | null, kind: StageKind, entry: HistoryEntry, patch: Partial<Header> = {}): Header {
  return {
    span: 'header',
    kind,
    vocab: prev?.vocab ?? null,
    cased: prev?.cased ?? null,
    special: prev?.special ?? null,
    history: [...(prev?.history ?? []), entry],
    ...patch,
  }
}

/** The error for a stream from the wrong stage, naming what was expected and what came. */
export function checkKind(h: Header, expected: StageKind[], source: string, line: number): void {
  if (expected.includes(h.kind)) return
  const want = expected.map((k) => `${k} (from ${PRODUCER[k]})`).join(' or ')
  throw errorAt(source, line, `expected a stream of ${want}, got ${h.kind} (from ${PRODUCER[h.kind]})`)
}
