/** Round axis ranges and tick labels for the curve charts (terminal and SVG). */

export interface Axis {
  min: number
  max: number
  step: number
  ticks: number[]
}

const STEPS = [1, 2, 2.5, 5, 10]

/**
 * An axis from `lo` to `hi` widened to round ticks about `target` apart, e.g. [0.37, 9.8] →
 * 0, 2, 4, 6, 8, 10. With `integer` the tick step is at least 1 (training steps).
 */
export function niceAxis(lo: number, hi: number, target = 5, integer = false): Axis {
  if (hi < lo) [lo, hi] = [hi, lo]
  if (hi === lo) {
    const pad = integer ? 1 : Math.abs(lo) * 0.1 || 1
    lo -= pad
    hi += pad
  }
  const raw = (hi - lo) / Math.max(1, target)
  const mag = 10 ** Math.floor(Math.log10(raw))
  let step = (STEPS.find((s) => s * mag >= raw * (1 - 1e-9)) ?? 10) * mag
  if (integer) step = Math.max(1, Math.round(step))
  const min = Math.floor(lo / step + 1e-9) * step
  const max = Math.ceil(hi / step - 1e-9) * step
  const ticks: number[] = []
  for (let i = 0; min + i * step <= max + step * 1e-9; i++) ticks.push(Number((min + i * step).toPrecision(12)))
  return {min, max, step, ticks}
}

/** A tick label with as many decimals as the step needs: 0.25 → "0.25", 2000 → "2,000". */
export function tickLabel(value: number, step: number): string {
  const exp = Math.floor(Math.log10(step) + 1e-9)
  const mantissa = step / 10 ** exp // 1, 2, 2.5 or 5: 2.5 needs one more decimal
  const decimals = Math.max(0, -exp + (Math.abs(mantissa - Math.round(mantissa)) > 1e-6 ? 1 : 0))
  if (decimals === 0) return Math.round(value).toLocaleString('en-US')
  return value.toFixed(decimals)
}

/** A value for the legend or the summary: 4 significant figures, no exponent for the usual sizes. */
export function shortNumber(v: number): string {
  if (v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e6)) return v.toExponential(2)
  return Number(v.toPrecision(4)).toString()
}
