/** Comparisons of span's numbers with another implementation's (the interop tests). */

type Nested = number | Nested[]

const flat = (x: Nested): number[] => (Array.isArray(x) ? x.flatMap(flat) : [x])

/**
 * max |a − b| / max |b| over the whole tensor: the relative error of `a` against the reference
 * `b` at the reference's scale (an element-wise ratio would divide by values that are near 0 by
 * chance). Throws when the shapes' element counts differ or a value is not finite.
 */
export function maxRel(a: Nested, b: Nested): number {
  const x = flat(a)
  const y = flat(b)
  if (x.length !== y.length) throw new Error(`${x.length} values against ${y.length}`)
  let diff = 0
  let scale = 0
  for (let i = 0; i < x.length; i++) {
    if (!Number.isFinite(x[i]) || !Number.isFinite(y[i])) throw new Error(`value ${i} is not finite: ${x[i]} against ${y[i]}`)
    diff = Math.max(diff, Math.abs(x[i] - y[i]))
    scale = Math.max(scale, Math.abs(y[i]))
  }
  return scale === 0 ? diff : diff / scale
}

/** The token states [T, H] of each record of `span encode`'s output (a header line, if any, aside). */
export const hiddenOf = (stdout: string): number[][][] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as {hidden?: number[][]})
    .filter((r) => r.hidden)
    .map((r) => r.hidden!)
