import {existsSync} from 'node:fs'
import {dirname, isAbsolute, join} from 'node:path'
import {UsageError} from '../stream/errors.js'
import type {Header} from '../stream/header.js'
import {loadVocab, type Vocab} from '../text/vocab.js'
import type {SpanParams} from './inspect.js'
import type {InspectSpecial} from './inspect-records.js'

export const DEFAULT_P = 0.2
export const DEFAULT_MAX_SPAN = 10

type Warn = (msg: string) => void

/** The flags of the last `span mask` in the header's history, if any. */
function maskFlags(header: Header | null): Record<string, unknown> | null {
  const entry = header?.history.filter((h) => h?.stage === 'mask').at(-1)
  return entry?.flags && typeof entry.flags === 'object' ? entry.flags : null
}

function validP(x: unknown): x is number {
  return typeof x === 'number' && x > 0 && x <= 1
}

function validMax(x: unknown): x is number {
  return Number.isInteger(x) && (x as number) >= 1
}

/**
 * p and max-span of the theoretical distribution: the header's `span mask` flags {p, maxSpan}
 * when present, else the defaults 0.2 and 10. A flag given on the command line overrides the
 * header (with a note on stderr when they differ).
 */
export function spanParams(header: Header | null, flags: {p?: number; maxSpan?: number}, warn: Warn): SpanParams {
  const mf = maskFlags(header)
  const hp = validP(mf?.p) ? mf.p : undefined
  const rawMax = mf?.maxSpan ?? mf?.['max-span']
  const hmax = validMax(rawMax) ? rawMax : undefined
  if (flags.p !== undefined && hp !== undefined && flags.p !== hp) warn(`using --p ${flags.p}; the stream was masked with p = ${hp}`)
  if (flags.maxSpan !== undefined && hmax !== undefined && flags.maxSpan !== hmax) {
    warn(`using --max-span ${flags.maxSpan}; the stream was masked with max-span ${hmax}`)
  }
  const from = flags.p !== undefined || flags.maxSpan !== undefined ? 'flags' : hp !== undefined || hmax !== undefined ? 'header' : 'default'
  return {
    p: flags.p ?? hp ?? DEFAULT_P,
    maxSpan: flags.maxSpan ?? hmax ?? DEFAULT_MAX_SPAN,
    from,
    scheme: typeof mf?.scheme === 'string' ? mf.scheme : null,
  }
}

/** A vocabulary, or why there is none (said on stderr only if the stream needs word counts). */
export interface VocabChoice {
  vocab: Vocab | null
  missing: string | null
}

/**
 * `--vocab FILE` (which must load), else the header's vocab.path, tried as written and then
 * beside the input file. A vocabulary that differs from the header's hash is used with a warning.
 */
export function chooseVocab(header: Header | null, flag: string | undefined, inputPath: string, warn: Warn): VocabChoice {
  const info = header?.vocab ?? null
  let vocab: Vocab | null = null
  if (flag) vocab = loadVocab(flag)
  else if (info?.path) {
    const found = candidates(info.path, inputPath).find((c) => existsSync(c))
    if (!found) return {vocab: null, missing: `vocabulary ${info.path} (named by the header) not found; give --vocab FILE`}
    vocab = loadVocab(found)
  } else {
    return {vocab: null, missing: 'no vocabulary (the stream has no header naming one; give --vocab FILE)'}
  }
  if (info?.sha256 && vocab.info.sha256 !== info.sha256) {
    warn(`${vocab.info.path}: not the vocabulary the stream was made with (sha256 differs); word boundaries may be wrong`)
  }
  return {vocab, missing: null}
}

function candidates(path: string, inputPath: string): string[] {
  if (isAbsolute(path) || inputPath === '-' || inputPath === '') return [path]
  return [path, join(dirname(inputPath), path)]
}

/**
 * The ids of [CLS], [SEP] and [PAD]: each from its flag, else the vocabulary, else the header.
 * Null when none is known; an error when only some are.
 */
export function chooseSpecial(flags: Partial<InspectSpecial>, vocab: Vocab | null, header: Header | null): InspectSpecial | null {
  const base = vocab?.special ?? header?.special ?? null
  const ids = {cls: flags.cls ?? base?.cls, sep: flags.sep ?? base?.sep, pad: flags.pad ?? base?.pad}
  const missing = (Object.keys(ids) as Array<keyof InspectSpecial>).filter((k) => ids[k] === undefined)
  if (missing.length === 3) return null
  if (missing.length > 0) {
    throw new UsageError(`special-token ids incomplete: give ${missing.map((k) => `--${k}`).join(' and ')} too (or --vocab FILE)`)
  }
  return ids as InspectSpecial
}
