/**
 * Sentence breaks for documents that have none (OntoGUM's 3-column layout): a sentence ends after
 * a run of `.`, `!` or `?` tokens and the closing quotes or brackets right after it. The reference
 * reads OntoNotes' sentences (minimize.py); without them every span of ≤ 30 sub-tokens would be a
 * candidate across sentence ends and segments would end mid-sentence. Of OntoGUM's gold mentions
 * none in train (23,320) or dev (3,818) crosses such a break, 2 of test's 3,581 do ("Democracy
 * Now ! segment") (docs/algorithms.md#coreference).
 */
const ENDS = new Set(['.', '!', '?'])
const CLOSERS = new Set(['"', "'", "''", ')', ']', '”', '’', '»'])

/** Sentence index of each word, from punctuation. */
export function punctuationSentences(words: readonly string[]): number[] {
  const out: number[] = []
  let s = 0
  let ended = false // inside a sentence-ending run (an end mark, then closers)
  for (const w of words) {
    if (ended && !ENDS.has(w) && !CLOSERS.has(w)) {
      s++
      ended = false
    }
    out.push(s)
    if (ENDS.has(w)) ended = true
  }
  return out
}

/** The document's sentence ids; punctuation's where it has no break (one sentence of more than one word). */
export function sentenceIds(words: readonly string[], sentence: readonly number[]): readonly number[] {
  const oneSentence = sentence.every((x) => x === sentence[0])
  return oneSentence && words.length > 1 ? punctuationSentences(words) : sentence
}
