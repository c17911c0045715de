/**
 * C's printf `%6.2f` (what Perl's printf calls): the double's exact binary value rounded to two
 * decimals, ties to even (glibc in the default rounding mode). JS toFixed breaks ties upwards,
 * which differs on values such as 12.125 (exactly representable).
 */

/** `%W.Df` of a finite double. */
export function cFixed(x: number, decimals: number, width = 0): string {
  if (!Number.isFinite(x)) return (x > 0 ? 'inf' : Number.isNaN(x) ? 'nan' : '-inf').padStart(width)
  const neg = x < 0 || Object.is(x, -0)
  const exact = Math.abs(x).toFixed(100) // the exact decimal expansion (doubles need ≤ 1074 digits only below 2^-52; 100 suffices for |x| ≥ 1e-40)
  const [int, frac] = exact.split('.')
  const kept = frac.slice(0, decimals)
  const rest = frac.slice(decimals)
  let digits = BigInt(int + kept)
  const half = rest[0] > '5' || (rest[0] === '5' && /[1-9]/.test(rest.slice(1)))
  const tie = rest[0] === '5' && !/[1-9]/.test(rest.slice(1))
  if (half || (tie && digits % 2n === 1n)) digits += 1n
  let s = digits.toString().padStart(decimals + 1, '0')
  if (decimals > 0) s = `${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}`
  return `${neg ? '-' : ''}${s}`.padStart(width)
}

/** conlleval's `%6.2f`. */
export const cPercent = (x: number): string => cFixed(x, 2, 6)
