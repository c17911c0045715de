import type {MaskVocab, Scratch} from './mask-scratch.js'
import type {Rng} from './rng.js'

/**
 * BERT's masking (`create_masked_lm_predictions` in create_pretraining_data.py, and SpanBERT's
 * `BertRandomMaskingScheme`): `budget` distinct positions uniformly among the n maskable ones,
 * by a partial Fisher–Yates shuffle of scratch.cand.
 */
export function selectSubwordMask(s: Scratch, n: number, budget: number, rng: Rng): void {
  const {masked, cand} = s
  for (let j = 0; j < budget; j++) {
    const r = j + rng.int(n - j)
    const pos = cand[r]
    cand[r] = cand[j]
    cand[j] = pos
    masked[pos] = 1
  }
}

/**
 * Whole-word masking (BERT's `--do_whole_word_mask`): whole words in a random order until the
 * budget is spent. Where BERT skips a word that would overshoot (and so often masks fewer),
 * we cut the last word at the budget, so exactly `budget` tokens are masked, as in the span
 * scheme; every other chosen word is masked whole.
 */
export function selectWholeWordMask(ids: readonly number[], vocab: MaskVocab, s: Scratch, n: number, budget: number, rng: Rng): void {
  const {masked, cand} = s
  const words = wordStarts(ids, vocab, cand, n)
  let count = 0
  for (let j = 0; count < budget; j++) {
    const r = j + rng.int(words - j)
    let i = cand[r]
    cand[r] = cand[j]
    cand[j] = i
    do {
      masked[i++] = 1
      count++
    } while (count < budget && i < ids.length && vocab.special[ids[i]] === 0 && vocab.cont[ids[i]] === 1)
  }
}

/**
 * Compacts cand (the n maskable positions, in order) to the word starts among them: a maskable
 * token that is not a `##` piece, or that follows a special token. Returns how many.
 */
function wordStarts(ids: readonly number[], vocab: MaskVocab, cand: Int32Array, n: number): number {
  let w = 0
  for (let j = 0; j < n; j++) {
    const i = cand[j]
    if (vocab.cont[ids[i]] === 0 || i === 0 || vocab.special[ids[i - 1]] === 1) cand[w++] = i
  }
  return w
}
