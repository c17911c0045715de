import * as tf from '@tensorflow/tfjs'
import {SpanError} from '../stream/errors.js'
import type {Precision} from './cuda/bf16.js'
import {kernelsEnabled} from './native-kernels.js'
import {nativeAddon, nativePrecision} from './native.js'
import {type NativePrecision, nativeDefaultPrecision, nativePrecisions} from './native-precision.js'

/** The part of backend.ts' BackendOptions that says the device and precision asked for. */
export interface PrecisionAsked {
  device?: number
  precision?: string
  inherited?: readonly string[]
  precisionFlag?: string
}

/**
 * The precision a backend other than cuda runs at, or a usage error (exit 2) in one line: `--device`,
 * `--precision tf32` and `fp16` mean cuda; `bf16` means cuda, or native on a CPU with bf16 dot products
 * (native-precision.ts); the CPU backends compute in fp32 otherwise. Given none, native's default
 * (SPAN_NATIVE_PRECISION, else by the CPU). What only a resumed run's saved config gave
 * (o.inherited) and this backend cannot do is not refused: the run continues at the backend's
 * default, said in a one-line notice. null on cuda (its own options: cuda/backend.ts).
 */
export function cpuPrecision(name: string, o: PrecisionAsked, auto: boolean, notice: (line: string) => void): NativePrecision | null {
  if (name === 'cuda') return null
  const can: readonly string[] = name === 'native' ? nativePrecisions() : ['fp32']
  const inh = new Set(o.inherited ?? [])
  const device = o.device !== undefined ? `--device ${o.device}` : null
  const bad = o.precision !== undefined && !can.includes(o.precision) ? `${o.precisionFlag ?? '--precision'} ${o.precision}` : null
  const typed = (!inh.has('device') && device) || (!inh.has('precision') && bad) || null
  if (typed) throw new SpanError(`${typed} needs ${needs(typed)}; ${chose(name, auto, typed === device, can)}`, 2)
  const run: NativePrecision = o.precision !== undefined && !bad ? (o.precision as NativePrecision) : name === 'native' ? nativeDefaultPrecision() : 'fp32'
  if (device || bad)
    notice(
      `span: the resumed run ran ${[device && `on ${device}`, bad && `at ${bad}`].filter(Boolean).join(' ')}; --backend ${name} ${computes(name, can)}: the run continues at ${run}`,
    )
  return run
}

const needs = (flag: string): string => (flag.endsWith(' bf16') ? '--backend cuda, or native on a CPU with bf16 dot products' : '--backend cuda')

/** What a CPU backend computes in. */
function computes(name: string, can: readonly string[]): string {
  if (name !== 'native') return 'computes in fp32 on the CPU'
  return can.includes('bf16') ? 'computes in fp32 or bf16' : 'computes in fp32 only on this CPU (no bf16 dot products)'
}

/** The second half of the usage error: the backend and why it cannot. */
function chose(name: string, auto: boolean, isDevice: boolean, can: readonly string[]): string {
  if (auto) return `--backend auto chose ${name}${name === 'native' && !isDevice ? `, which ${computes(name, can)}` : ''} (see span doctor)`
  if (name !== 'native') return `--backend ${name} has no devices or precisions`
  return isDevice ? '--backend native has no devices' : `--backend native ${computes(name, can)}${can.includes('bf16') ? '' : ': see span doctor'}`
}

/**
 * The precision of the current backend's matrix products, as a resolved config records it: cuda's
 * (the flag, else SPAN_CUDA_PRECISION, else by compute capability), native's (the flag, else
 * SPAN_NATIVE_PRECISION, else by the CPU), fp32 on every other backend.
 */
export function backendPrecision(): Precision {
  if (tf.getBackend() === 'cuda') return (tf.backend() as unknown as {precision: Precision}).precision
  return tf.getBackend() === 'cpu' && kernelsEnabled() && nativeAddon() !== null ? nativePrecision() : 'fp32'
}
