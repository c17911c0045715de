/**
 * B³ (Bagga and Baldwin 1998) as CorScorer.pm's BCUBED computes it: for each response mention
 * (in response order) with key chain K (the one its id last occurs in, else none) and response
 * chain R, c = the mentions of R that occur in K (R's copies each counted); precision adds c/|R|,
 * recall adds c/|K|. Denominators: all key and all response mentions, repeats included, so
 * response singletons lower precision. The floating-point sums run in the scorer's order.
 */
import type {RPCounts} from './counts.js'
import {chainIndex} from './mentions.js'

export function bcub(key: readonly number[][], response: readonly number[][]): RPCounts {
  const kIndex = chainIndex(key)
  const keySets = new Map<number, Set<number>>()
  let acumP = 0
  let acumR = 0
  for (const chain of response) {
    const common = new Map<number, number>() // key chain → c
    for (const m of chain) {
      const k = kIndex.get(m)
      if (k === undefined) continue // c = 0: adds 0 to precision, nothing to recall
      let c = common.get(k)
      if (c === undefined) {
        let set = keySets.get(k)
        if (set === undefined) keySets.set(k, (set = new Set(key[k])))
        c = chain.reduce((n, mr) => n + (set.has(mr) ? 1 : 0), 0)
        common.set(k, c)
      }
      acumP += c / chain.length
      acumR += c / (key[k] as number[]).length
    }
  }
  const size = (chains: readonly number[][]) => chains.reduce((n, c) => n + c.length, 0)
  return {recallNum: acumR, recallDen: size(key), precisionNum: acumP, precisionDen: size(response)}
}
