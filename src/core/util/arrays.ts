/**
 * Max, min and append over arrays of any length. `Math.max(...xs)` and `out.push(...xs)` put every
 * element on the call stack and throw "Maximum call stack size exceeded" at ~120,000 elements
 * (V8, Node 20): a long document's candidate spans, a metrics file's steps, an n-gram dictionary
 * reach that. tools/check-spread.mjs (npm run lint) refuses such spreads; these are what to use.
 */

/** The largest of xs and `floor` (Math.max's: -Infinity for none; NaN if any is NaN). */
export function maxOf(xs: Iterable<number>, floor = -Infinity): number {
  let m = floor
  for (const x of xs) m = Math.max(m, x)
  return m
}

/** The smallest of xs and `ceiling` (Math.min's: Infinity for none; NaN if any is NaN). */
export function minOf(xs: Iterable<number>, ceiling = Infinity): number {
  let m = ceiling
  for (const x of xs) m = Math.min(m, x)
  return m
}

/** Appends every element of each source to `into`, in order; returns `into`. */
export function pushAll<T>(into: T[], ...sources: Iterable<T>[]): T[] {
  for (const s of sources) for (const x of s) into.push(x)
  return into
}
