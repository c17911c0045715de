import * as tf from '@tensorflow/tfjs'
import {AUTO_ORDER, initBackend} from './backend.js'
import {cudaOptions} from './cuda/backend.js'
import {startCudaBackend} from './cuda/start.js'
import {cudaStatus} from './cuda/status.js'
import {loadNative} from './native.js'
import {cpuBf16} from './cpu-bf16.js'
import {nativeDefaultPrecision, nativePrecisionLine} from './native-precision.js'

/**
 * What `span doctor` reports (src/commands/doctor.ts prints it): one line per backend span
 * knows, fastest first, each with what it runs on or why it is unavailable, and the backend
 * `auto` picks. More probes (e.g. MPI/NCCL) join PROBES here.
 */
export interface BackendReport {
  backend: string
  available: boolean
  /** what it runs on when available, else why it is not */
  detail: string
  /** native: its default precision here (native-precision.ts) and the CPU's bf16 dot-product flags (cpu-bf16.ts) */
  default_precision?: string
  cpu_bf16?: string[]
}

/** Every backend span knows, fastest first: the order `auto` tries them in. */
export const DOCTOR_ORDER = ['cuda', 'tensorflow-gpu', 'tensorflow', 'native', 'wasm', 'cpu'] as const
export type DoctorBackend = (typeof DOCTOR_ORDER)[number]

const DETAIL: Record<string, string> = {
  'tensorflow-gpu': 'libtensorflow with CUDA (@tensorflow/tfjs-node-gpu)',
  tensorflow: 'libtensorflow on the CPU (@tensorflow/tfjs-node)',
  wasm: 'XNNPACK wasm, SIMD, single-threaded under Node',
  cpu: 'TensorFlow.js reference kernels in plain JavaScript',
}

/** Tries one backend; never throws. */
export async function probeBackend(name: DoctorBackend, threads?: number): Promise<BackendReport> {
  if (name === 'cuda') {
    const s = cudaStatus(cudaOptions().device) // the device and libraries, then the backend started and self-checked
    const why = s.available ? await startCudaBackend() : s.detail
    return {backend: name, available: why === null, detail: why ?? s.detail}
  }
  if (name === 'native') return probeNative(threads)
  try {
    await initBackend(name)
    return {backend: name, available: true, detail: DETAIL[name]}
  } catch (err) {
    return {backend: name, available: false, detail: (err as Error).message.replace(/^--backend \S+ is not available: /, '')}
  }
}

/** The native backend: the addon, its BLAS and threads, the CPU's bf16 capability and the default precision it gives. */
function probeNative(threads?: number): BackendReport {
  const s = loadNative(threads)
  if (!s.available) return {backend: 'native', available: false, detail: s.error ?? 'not available'}
  const precision = {default_precision: safeDefault(), cpu_bf16: cpuBf16().flags}
  return {
    backend: 'native',
    available: true,
    detail: `cpu backend with native kernels; BLAS ${s.blas}, ${s.threads} thread${s.threads === 1 ? '' : 's'}; ${nativePrecisionLine()}`,
    ...precision,
  }
}

/** The default precision, fp32 where SPAN_NATIVE_PRECISION=bf16 is refused (the doctor reports it, it does not refuse). */
function safeDefault(): string {
  try {
    return nativeDefaultPrecision()
  } catch {
    return 'fp32'
  }
}

/** Every backend's report, in DOCTOR_ORDER; leaves the cpu backend current. */
export async function probeBackends(threads?: number): Promise<BackendReport[]> {
  const reports: BackendReport[] = []
  for (const name of DOCTOR_ORDER) reports.push(await probeBackend(name, threads))
  await tf.setBackend('cpu')
  return reports
}

/** The backend `auto` picks: the first available in backend.ts' AUTO_ORDER. */
export function autoPick(reports: BackendReport[]): string | null {
  const order = DOCTOR_ORDER.filter((b) => (AUTO_ORDER as readonly string[]).includes(b))
  return order.find((b) => reports.find((r) => r.backend === b)?.available) ?? null
}

/** Backends the doctor reports that `auto` never tries. */
export const notInAuto = (): string[] => DOCTOR_ORDER.filter((b) => !(AUTO_ORDER as readonly string[]).includes(b))

/** Why `r` was not the pick, for the text report. */
export function whyNot(r: BackendReport, auto: string | null): string {
  if (!r.available) return 'unavailable (above)'
  if (notInAuto().includes(r.backend)) return "not in auto's order (src/core/engine/backend.ts AUTO_ORDER)"
  return `available, but ${auto} comes first`
}
