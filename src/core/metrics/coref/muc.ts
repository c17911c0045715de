/**
 * MUC (Vilain et al. 1995) as CorScorer.pm's MUCScorer computes it: a response mention counts one
 * correct link when a later mention of its response chain lies in the same key chain (the key
 * chain an id last occurs in); links are chain size − 1, key over key chains and response over
 * response chains. Singletons add no links, so the response singletons IdentifMentions adds or
 * drops before MUC change nothing; the chains after repeated mentions are dropped give the same.
 */
import type {RPCounts} from './counts.js'
import {chainIndex} from './mentions.js'

const links = (chains: readonly number[][]) => chains.reduce((n, c) => n + (c.length > 0 ? c.length - 1 : 0), 0)

export function muc(key: readonly number[][], response: readonly number[][]): RPCounts {
  const kIndex = chainIndex(key)
  let correct = 0
  for (const chain of response) {
    const later = new Set<number>()
    for (let i = chain.length - 1; i >= 0; i--) {
      const k = kIndex.get(chain[i] as number)
      if (k === undefined) continue
      if (later.has(k)) correct++
      later.add(k)
    }
  }
  return {recallNum: correct, recallDen: links(key), precisionNum: correct, precisionDen: links(response)}
}
