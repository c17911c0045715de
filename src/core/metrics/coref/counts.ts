/** Recall and precision numerators and denominators, summed over documents as the scorer sums them. */
export interface RPCounts {
  recallNum: number
  recallDen: number
  precisionNum: number
  precisionDen: number
}

export const zeroCounts = (): RPCounts => ({recallNum: 0, recallDen: 0, precisionNum: 0, precisionDen: 0})

export function addCounts(into: RPCounts, c: RPCounts): void {
  into.recallNum += c.recallNum
  into.recallDen += c.recallDen
  into.precisionNum += c.precisionNum
  into.precisionDen += c.precisionDen
}

/** Recall, precision and F1 as fractions, computed as ShowRPF computes them (0 where a denominator is 0). */
export function rpf(c: RPCounts): {recall: number; precision: number; f1: number} {
  const precision = c.precisionDen ? c.precisionNum / c.precisionDen : 0
  const recall = c.recallDen ? c.recallNum / c.recallDen : 0
  const f1 = recall + precision ? (2 * precision * recall) / (precision + recall) : 0
  return {recall, precision, f1}
}
