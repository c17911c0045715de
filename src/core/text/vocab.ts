import {createHash} from 'node:crypto'
import {existsSync, statSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {SpanError} from '../stream/errors.js'
import type {SpecialIds, VocabInfo} from '../stream/header.js'
import {readTextWholeSync, readWholeSync} from '../util/read-whole.js'

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures')
/** The project's own vocabulary, learned from the corpus below by `span vocab` (tools/make-fixtures.mjs). */
export const DEFAULT_VOCAB = join(FIXTURES, 'vocab.txt')
/** The embedded default corpus: public-domain prose, one sentence per line, documents apart. */
export const DEFAULT_CORPUS = join(FIXTURES, 'corpus.txt')

/** A WordPiece vocabulary: one token per line, the line number (from 0) is the id. */
export interface Vocab {
  tokens: string[]
  ids: Map<string, number>
  special: SpecialIds
  info: VocabInfo
  /** From `tokenizer_config.json` beside the file (Hugging Face's `do_lower_case`), else guessed. */
  cased: boolean
}

export function loadVocab(path: string): Vocab {
  if (!existsSync(path)) throw new SpanError(`${path}: vocabulary file not found`)
  if (statSync(path).isDirectory()) throw new SpanError(`${path}: is a directory (EISDIR); give the vocabulary file`)
  const bytes = readWholeSync(path, 'vocabulary')
  const text = bytes.toString('utf8')
  const tokens = text.split('\n')
  if (tokens.at(-1) === '') tokens.pop()
  for (let i = 0; i < tokens.length; i++) if (tokens[i].endsWith('\r')) tokens[i] = tokens[i].slice(0, -1)
  const ids = new Map<string, number>()
  tokens.forEach((t, i) => ids.set(t, i)) // a duplicate keeps its last id, as BERT's load_vocab does
  const special = specialIds(ids, path)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  return {tokens, ids, special, info: {path: resolve(path), sha256, size: tokens.length}, cased: casedFlag(path, tokens)} // absolute: a header is read from other directories
}

function specialIds(ids: Map<string, number>, path: string): SpecialIds {
  const get = (t: string) => {
    const id = ids.get(t)
    if (id === undefined) throw new SpanError(`${path}: not a BERT vocabulary (no ${t} token)`)
    return id
  }
  return {pad: get('[PAD]'), unk: get('[UNK]'), cls: get('[CLS]'), sep: get('[SEP]'), mask: get('[MASK]')}
}

/**
 * Cased or not: `do_lower_case` in a `tokenizer_config.json` beside the vocabulary (what
 * `span vocab` writes, and what Hugging Face checkpoints carry); without one, a vocabulary with
 * no entry that lower-casing would change is an uncased one (true of Google's uncased BERT files).
 */
function casedFlag(path: string, tokens: string[]): boolean {
  const cfg = join(dirname(path), 'tokenizer_config.json')
  if (existsSync(cfg)) {
    try {
      const lower = JSON.parse(readTextWholeSync(cfg, 'config')).do_lower_case
      if (typeof lower === 'boolean') return !lower
    } catch (err) {
      if (err instanceof SpanError) throw err
      throw new SpanError(`${cfg}: invalid JSON`)
    }
  }
  return tokens.some((t) => !t.startsWith('[') && t !== t.toLowerCase())
}
