import {Flags} from '@oclif/core'
import * as tf from '@tensorflow/tfjs'
import {SpanCommand} from '../base.js'
import {AUTO_ORDER, initBackend} from '../core/engine/backend.js'
import {loadNative} from '../core/engine/native.js'
import {engineLine, probeDistEngines} from '../core/dist/probe.js'

/** One backend's line of the report. */
export interface BackendReport {
  backend: string
  available: boolean
  /** what it runs on when available, else why it is not */
  detail: string
}

/** Every backend span knows, fastest first: the order `auto` tries them in. */
export const DOCTOR_ORDER = ['tensorflow-gpu', 'tensorflow', 'native', 'wasm', 'cpu'] as const

/** Tries one backend; never throws. */
async function probe(name: (typeof DOCTOR_ORDER)[number], threads: number | undefined): Promise<BackendReport> {
  if (name === 'native') {
    const s = loadNative(threads)
    return s.available
      ? {backend: name, available: true, detail: `cpu backend with native kernels; BLAS ${s.blas}, ${s.threads} thread${s.threads === 1 ? '' : 's'}`}
      : {backend: name, available: false, detail: s.error ?? 'not available'}
  }
  try {
    await initBackend(name)
    const detail = {
      'tensorflow-gpu': 'libtensorflow with CUDA (@tensorflow/tfjs-node-gpu)',
      tensorflow: 'libtensorflow on the CPU (@tensorflow/tfjs-node)',
      wasm: 'XNNPACK wasm, SIMD, single-threaded under Node',
      cpu: 'TensorFlow.js reference kernels in plain JavaScript',
    }[name]
    return {backend: name, available: true, detail}
  } catch (err) {
    return {backend: name, available: false, detail: (err as Error).message.replace(/^--backend \S+ is not available: /, '')}
  }
}

/** The backend `auto` picks: the first available in backend.ts' AUTO_ORDER (plus native where it lists it). */
export function autoPick(reports: BackendReport[]): string | null {
  const order = DOCTOR_ORDER.filter((b) => (AUTO_ORDER as readonly string[]).includes(b))
  return order.find((b) => reports.find((r) => r.backend === b)?.available) ?? null
}

export default class Doctor extends SpanCommand {
  static override summary = 'Report which compute backends work here and which one --backend auto picks'
  static override description =
    'Tries each TensorFlow.js backend span can use (tensorflow-gpu, tensorflow, native, wasm, cpu) and prints one line per ' +
    'backend: what it runs on, or why it is unavailable; then the backend `auto` picks and why the faster ones were passed over. ' +
    'The native backend is span\'s own addon (native/, built by npm install) with GEMM from the system BLAS.'
  static override examples = ['span doctor', 'span doctor --json | jq .']
  static override flags = {
    json: Flags.boolean({description: 'one JSON record per backend, then {"auto": …}'}),
    threads: Flags.integer({description: 'threads for the native backend (default: every core)', min: 1}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Doctor)
    const reports: BackendReport[] = []
    for (const name of DOCTOR_ORDER) reports.push(await probe(name, flags.threads))
    await tf.setBackend('cpu')
    const auto = autoPick(reports)
    const notInAuto = DOCTOR_ORDER.filter((b) => !(AUTO_ORDER as readonly string[]).includes(b))
    if (flags.json) {
      for (const r of reports) process.stdout.write(JSON.stringify(r) + '\n')
      process.stdout.write(JSON.stringify({auto, not_in_auto_order: notInAuto, collectives: probeDistEngines()}) + '\n')
      return
    }
    const width = Math.max(...reports.map((r) => r.backend.length))
    for (const r of reports) process.stdout.write(`${r.backend.padEnd(width)}  ${r.available ? 'ok     ' : 'missing'}  ${r.detail}\n`)
    process.stdout.write(`auto picks: ${auto ?? 'nothing (no backend starts)'}\n`)
    for (const r of reports) {
      if (r.backend === auto) continue
      const why = !r.available
        ? 'unavailable (above)'
        : notInAuto.includes(r.backend as never)
          ? 'not in auto\'s order (src/core/engine/backend.ts AUTO_ORDER)'
          : `available, but ${auto} comes first`
      process.stdout.write(`  not ${r.backend}: ${why}\n`)
    }
    for (const e of probeDistEngines()) process.stdout.write(engineLine(e)) // issue 14: MPI and NCCL
  }
}
