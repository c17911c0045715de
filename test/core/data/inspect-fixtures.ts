import type {Rec} from '../../../src/core/stream/ndjson.js'

/**
 * A small vocabulary with WordPiece continuations, and masked examples built by hand on it, with
 * the answers worked out below. Ids: 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] 4 [MASK] 5 the 6 cat 7 un
 * 8 ##believ 9 ##able 10 dog 11 ran 12 ##ning.
 */
export const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'un', '##believ', '##able', 'dog', 'ran', '##ning']
export const SPECIAL = {cls: 2, sep: 3, pad: 0}

/**
 * A: [CLS] the un ##believ ##able cat ran ##ning dog [SEP] [PAD] [PAD]   (positions 0..11)
 *   span [3,5] mask   ##believ ##able cat   starts mid-word: 1 word start + 1 = 2 words, 3 tokens
 *   span [7,7] random ##ning → dog         mid-word: 0 + 1 = 1 word, 1 token
 *   span [1,1] keep   the                  1 word, 1 token
 *   5 targets; 8 non-special tokens; padding-free length 10
 */
export const EXAMPLE_A = {
  ids: [2, 5, 7, 4, 4, 4, 11, 10, 10, 3, 0, 0],
  targets: [[3, 8], [4, 9], [5, 6], [7, 12], [1, 5]],
  spans: [[3, 5, 'mask'], [7, 7, 'random'], [1, 1, 'keep']],
}

/**
 * B: [CLS] dog ran ##ning the cat [SEP]   (positions 0..6)
 *   span [2,5] mask   ran ##ning the cat   3 words, 4 tokens
 *   4 targets; 5 non-special tokens; length 7
 */
export const EXAMPLE_B = {
  ids: [2, 10, 4, 4, 4, 4, 3],
  targets: [[2, 11], [3, 12], [4, 5], [5, 6]],
  spans: [[2, 5, 'mask']],
}

/** Records as readNdjson yields them, numbered from `first`. */
export function recs(values: object[], first = 1): Rec[] {
  return values.map((v, i) => ({value: v as Record<string, unknown>, line: first + i}))
}

export async function* stream(values: object[]): AsyncGenerator<Rec> {
  yield* recs(values)
}
