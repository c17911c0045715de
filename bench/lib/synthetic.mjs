// Shared by the training benchmarks (model-step, train, native): a synthetic masked example in
// BERT's cased-vocabulary ids ([CLS] 101, [SEP] 102, [MASK] 103), ~15% masked in short spans.
export const V = 30522

export function syntheticExample(n, rng) {
  const ids = Array.from({length: n}, (_, i) => (i === 0 ? 101 : i === n - 1 ? 102 : 1000 + rng.int(V - 1000)))
  const targets = []
  const spans = []
  let budget = Math.ceil(0.15 * (n - 2))
  let pos = 1 + rng.int(4)
  while (budget > 0 && pos < n - 1) {
    const len = Math.min(budget, 1 + rng.int(5), n - 1 - pos)
    spans.push([pos, pos + len - 1, 'mask'])
    for (let i = pos; i < pos + len; i++) {
      targets.push([i, ids[i]])
      ids[i] = 103
    }
    budget -= len
    pos += len + 2 + rng.int(12)
  }
  return {ids, targets, spans}
}
