/**
 * A parsed JSON value as an error shows it: JSON.stringify, except for a number JSON.parse made
 * infinite (`1e999`), which JSON.stringify writes as `null` (issue 25, cause 11: "ids[1] = null").
 */
export function shownValue(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return `${v} (a number beyond a double's range, such as 1e999)`
  return JSON.stringify(v) ?? String(v)
}
