import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {SpanError} from '../stream/errors.js'
import {quote} from '../util/errors.js'
import {readTextWholeSync} from '../util/read-whole.js'

/** BERT's cased WordPiece vocabulary has 28996 entries; SpanBERT's releases use it and ship no vocab.txt (SpanBERT README). */
const CASED_SIZE = 28996

/**
 * The vocabulary of a checkpoint: `--vocab FILE` when given, else the directory's vocab.txt.
 * Without either the error names the fix (and, for 28996 entries, which vocabulary it is);
 * a vocabulary with more entries than the model's embeddings is refused.
 */
export function resolveVocab(dir: string, vocabFlag: string | undefined, vocabSize: number): string {
  const path = vocabFlag ?? join(dir, 'vocab.txt')
  if (!existsSync(path)) {
    if (vocabFlag) throw new SpanError(`--vocab: ${quote(vocabFlag)}: no such file`)
    const hint =
      vocabSize === CASED_SIZE
        ? ` (vocab_size 28996 is BERT's cased vocabulary, as SpanBERT's README says: pass bert-base-cased's vocab.txt)`
        : ` (a vocabulary of ${vocabSize} entries)`
    throw new SpanError(`${quote(dir)}: no vocab.txt; give the model's vocabulary with --vocab FILE${hint}`)
  }
  const lines = readTextWholeSync(path, 'vocabulary').split('\n')
  const n = lines[lines.length - 1] === '' ? lines.length - 1 : lines.length
  if (n > vocabSize) throw new SpanError(`${path}: ${n} tokens, more than the model's vocab_size ${vocabSize} (not this model's vocabulary)`)
  return path
}
