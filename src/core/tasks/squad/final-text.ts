/**
 * run_squad's get_final_text: project the de-tokenized prediction (lowercased, accents
 * stripped, punctuation split off) back onto the original words' text by aligning the two
 * without their spaces; any doubt returns the whole original text. Code point indices.
 */
import {pySplit} from '../../metrics/squad-normalize.js'

/** _strip_spaces: the characters other than ' ', and where each came from. */
function stripSpaces(chars: string[]): {ns: string[]; nsToS: number[]} {
  const ns: string[] = []
  const nsToS: number[] = []
  chars.forEach((c, i) => {
    if (c === ' ') return
    nsToS.push(i)
    ns.push(c)
  })
  return {ns, nsToS}
}

/**
 * The [first, last] code points of `origText` that `predText` covers, or null where
 * get_final_text would return orig_text whole. `basicTokenize` is BERT's BasicTokenizer
 * with the model's do_lower_case.
 */
export function finalTextSpan(predText: string, origText: string, basicTokenize: (text: string) => string[]): [number, number] | null {
  const tokText = basicTokenize(origText).join(' ')
  const at = tokText.indexOf(predText)
  if (at < 0) return null
  const startPosition = Array.from(tokText.slice(0, at)).length
  const endPosition = startPosition + Array.from(predText).length - 1
  const orig = stripSpaces(Array.from(origText))
  const tok = stripSpaces(Array.from(tokText))
  if (orig.ns.length !== tok.ns.length) return null
  const tokSToNs = new Map<number, number>()
  tok.nsToS.forEach((s, i) => tokSToNs.set(s, i))
  const origStart = mapThrough(startPosition, tokSToNs, orig.nsToS)
  const origEnd = mapThrough(endPosition, tokSToNs, orig.nsToS)
  return origStart === null || origEnd === null ? null : [origStart, origEnd]
}

function mapThrough(position: number, tokSToNs: Map<number, number>, origNsToS: number[]): number | null {
  const ns = tokSToNs.get(position)
  if (ns === undefined || ns >= origNsToS.length) return null
  return origNsToS[ns]
}

/** get_final_text itself: the covered part of orig_text, or orig_text. */
export function getFinalText(predText: string, origText: string, basicTokenize: (text: string) => string[]): string {
  const span = finalTextSpan(predText, origText, basicTokenize)
  return span ? Array.from(origText).slice(span[0], span[1] + 1).join('') : origText
}

/** The prediction's text from its WordPieces: join, drop `##` joins, clean whitespace (write_predictions). */
export function detokenize(tokens: string[]): string {
  const text = tokens.join(' ').replaceAll(' ##', '').replaceAll('##', '')
  return pySplit(text.trim()).join(' ')
}
