import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {SpanError} from '../stream/errors.js'
import type {Header, VocabInfo} from '../stream/header.js'
import {loadVocab, type Vocab} from '../text/vocab.js'
import type {Masker} from './mask.js'
import type {NdjsonBytes} from '../stream/ndjson-bytes.js'
import {writeMasked, type BlockRecord} from './mask-io.js'
import type {Rng} from './rng.js'
import type {Unigram} from './unigram.js'
import {readWholeSync} from '../util/read-whole.js'

/** Tokens read before the first block is masked, to estimate the unigram distribution. */
export const UNIGRAM_PREFIX = 1_000_000

/**
 * The vocabulary of a stream: the file its header names, or `--vocab` (required for hand-written
 * streams without a header). The file must still be the one the stream was tokenized with.
 */
export function resolveVocab(header: Header | null, override: string | undefined, source: string): Vocab {
  const named = header?.vocab?.path
  if (!override && !named) throw new SpanError(`${source}: no header record naming the vocabulary (a hand-written stream?): give --vocab FILE`)
  const path = override ?? vocabBesideStream(header?.vocab ?? null, source)
  const vocab = loadVocab(path)
  const want = header?.vocab?.sha256
  if (want && want !== vocab.info.sha256) {
    throw new SpanError(
      `${path}: vocabulary does not match the stream's (sha256 ${vocab.info.sha256.slice(0, 12)}…, the header says ` +
        `${want.slice(0, 12)}… for ${named}): the file changed since the stream was tokenized, or --vocab names another one`,
    )
  }
  return vocab
}

/**
 * The header's vocabulary file: at the path it names (absolute since span 0.1; a relative one
 * is taken from the current directory), else the file of that name beside the stream's file,
 * if its SHA-256 is the header's.
 */
function vocabBesideStream(info: VocabInfo | null, source: string): string {
  const named = (info as VocabInfo).path
  if (existsSync(named) || source === 'stdin') return named
  const beside = join(dirname(source), basename(named))
  if (!existsSync(beside)) throw new SpanError(`${named}: vocabulary file not found (named by the header of ${source}; nor beside it): give --vocab FILE`)
  if (info?.sha256 && createHash('sha256').update(readWholeSync(beside, 'vocabulary')).digest('hex') !== info.sha256) {
    throw new SpanError(`${named}: vocabulary file not found, and ${beside} has another SHA-256 than the header's: give --vocab FILE`)
  }
  return beside
}

/**
 * Masks a stream of blocks into NDJSON bytes (`out`). With an estimated unigram distribution (no
 * `--unigram` file), the first `prefix` tokens of blocks are held back and counted before any
 * block is masked, so even the first random replacements come from a sound estimate; after that
 * each block is counted as it arrives, before it is masked. Memory: the prefix, then one block.
 */
export class MaskStream {
  private pending: BlockRecord[] = []
  private held = 0
  private warm: boolean

  constructor(
    private readonly masker: Masker,
    private readonly rng: Rng,
    private readonly unigram: Unigram,
    private readonly estimate: boolean,
    readonly out: NdjsonBytes,
    private readonly prefix = UNIGRAM_PREFIX,
  ) {
    this.warm = !estimate
  }

  /** Masks the block into `out`, or holds it while the prefix is being counted. */
  push(block: BlockRecord): void {
    if (this.estimate) this.unigram.add(block.ids)
    if (this.warm) return this.one(block)
    this.pending.push(block)
    this.held += block.ids.length
    if (this.held >= this.prefix) this.release()
  }

  /** Masks what is still held. */
  finish(): void {
    this.release()
  }

  private release(): void {
    this.warm = true
    for (const b of this.pending) this.one(b)
    this.pending = []
  }

  private one(block: BlockRecord): void {
    writeMasked(this.out, block, this.masker.mask(block.ids, this.rng, block.tags))
  }
}
