import type {Tag} from '../../../src/core/data/tags.js'
import {isWordStart, vocab} from './helpers.js'

/** Word-aligned stand-in tags: runs of capitalised words are ENT; "the" + a lowercase word is NP. */
export function fakeTags(ids: number[]): Tag[] {
  const words: [number, number][] = []
  for (let i = 1; i < ids.length - 1; i++) {
    if (isWordStart(ids, i)) words.push([i, i])
    else if (words.length > 0) words[words.length - 1][1] = i
  }
  const tok = (w: [number, number]) => vocab.tokens[ids[w[0]]]
  const tags: Tag[] = []
  for (let k = 0; k < words.length; k++) {
    if (/^[A-Z]/.test(tok(words[k]))) {
      let e = k
      while (e + 1 < words.length && /^[A-Z]/.test(tok(words[e + 1]))) e++
      tags.push([words[k][0], words[e][1], 'ENT'])
      k = e
    } else if (tok(words[k]) === 'the' && k + 1 < words.length && /^[a-z]/.test(tok(words[k + 1]))) {
      tags.push([words[k][0], words[k + 1][1], 'NP'])
      k++
    }
  }
  return tags
}
