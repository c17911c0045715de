/**
 * The passage side of run_squad: read_squad_examples' whitespace split of the context into
 * doc_tokens with char_to_word_offset, and the answer's word span. Indices are code points.
 */
import {pySplit} from '../../metrics/squad-normalize.js'
import type {SquadAnswer} from './dataset.js'

export interface SquadDoc {
  /** the context's code points (Python's indexing of the string) */
  chars: string[]
  /** doc_tokens: runs of characters between whitespace */
  words: string[]
  /** code point offset of each word's first character, and one past its last */
  wordStart: number[]
  wordEnd: number[]
  /** char_to_word_offset: the word each character belongs to (whitespace: the word before, or −1) */
  charToWord: number[]
}

/** run_squad's is_whitespace: space, tab, CR, LF and U+202F only (not NBSP). */
export function isSquadWhitespace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\u202f'
}

/** read_squad_examples' loop over paragraph_text. */
export function splitDoc(context: string): SquadDoc {
  const doc: SquadDoc = {chars: Array.from(context), words: [], wordStart: [], wordEnd: [], charToWord: []}
  let prevIsWhitespace = true
  doc.chars.forEach((c, i) => {
    if (isSquadWhitespace(c)) prevIsWhitespace = true
    else {
      if (prevIsWhitespace) {
        doc.words.push(c)
        doc.wordStart.push(i)
        doc.wordEnd.push(i + 1)
      } else {
        doc.words[doc.words.length - 1] += c
        doc.wordEnd[doc.words.length - 1] = i + 1
      }
      prevIsWhitespace = false
    }
    doc.charToWord.push(doc.words.length - 1)
  })
  return doc
}

/**
 * The answer's first and last word (start_position, end_position of read_squad_examples), or
 * null where run_squad logs "Could not find answer" and skips the example in training: the
 * words' text does not contain the whitespace-normalised answer.
 */
export function answerWords(doc: SquadDoc, answer: SquadAnswer): {first: number; last: number} | null {
  const len = Array.from(answer.text).length
  if (len === 0 || answer.start + len > doc.chars.length) return null
  const first = doc.charToWord[answer.start]
  const last = doc.charToWord[answer.start + len - 1]
  if (first < 0) return null
  const actual = doc.words.slice(first, last + 1).join(' ')
  const cleaned = pySplit(answer.text).join(' ') // whitespace_tokenize
  return actual.includes(cleaned) ? {first, last} : null
}
