import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../cli/base.js'
import {autoPick, notInAuto, probeBackends, whyNot} from '../core/engine/doctor.js'
import {gemmLines, nativeGemmReport} from '../core/engine/native-gemm-info.js'
import {engineLine, probeDistEngines} from '../core/dist/probe.js'
import {runSelftest, selftestTable} from '../core/doctor/selftest.js'
import {SpanError} from '../core/stream/index.js'
import {maxOf} from '../core/util/arrays.js'

export {type BackendReport, DOCTOR_ORDER, autoPick} from '../core/engine/doctor.js'

export default class Doctor extends SpanCommand {
  static override summary = 'Report which compute backends work here and which one --backend auto picks'
  static override description =
    'Tries each backend span can use (cuda, tensorflow-gpu, tensorflow, native, wasm, cpu) and prints one line per ' +
    'backend: what it runs on, or why it is unavailable; then the backend `auto` picks and why the faster ones were passed over. ' +
    'The native backend is span\'s own addon (native/, built by npm install) with GEMM from oneDNN or the system BLAS (its path, ISA and bf16 capability on three lines); cuda is span\'s ' +
    'GPU backend (native/cuda/), which opens the NVIDIA driver, NVRTC and cuBLASLt at run time.'
  static override examples = ['span doctor', 'span doctor --json | jq .', 'span doctor --selftest --backend cuda']
  static override flags = {
    json: Flags.boolean({description: 'one JSON record per backend, then {"auto": …}'}),
    threads: Flags.integer({description: 'threads for the native backend (default: every core; at most 1024)', min: 1, max: 1024}),
    selftest: Flags.boolean({
      description: 'run every kernel of --backend against native on random inputs, then one tiny training step; a table, exit 1 on any failure',
    }),
    backend: Flags.string({description: 'the backend --selftest checks (default: cuda)', options: ['cuda'], dependsOn: ['selftest']}),
    preset: Flags.string({description: 'the model of --selftest\'s training step (batch 2 × 16; default: tiny)', options: ['tiny', 'mini', 'base'], dependsOn: ['selftest']}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Doctor)
    if (flags.selftest) {
      const report = await runSelftest((flags.preset ?? 'tiny') as 'tiny' | 'mini' | 'base')
      await print(flags.json ? JSON.stringify(report) + '\n' : selftestTable(report))
      if (!report.ok) throw new SpanError(`--selftest: ${[...report.rows, report.step].filter((r) => !r.ok).map((r) => r.kernel).join(', ')} failed`)
      return
    }
    const reports = await probeBackends(flags.threads)
    const auto = autoPick(reports)
    if (flags.json) {
      for (const r of reports) await print(JSON.stringify(r) + '\n')
      await print(JSON.stringify({auto, not_in_auto_order: notInAuto(), collectives: probeDistEngines(), native_gemm: nativeGemmReport()}) + '\n')
      return
    }
    const width = maxOf(reports.map((r) => r.backend.length))
    for (const r of reports) await print(`${r.backend.padEnd(width)}  ${r.available ? 'ok     ' : 'missing'}  ${r.detail}\n`)
    await print(`auto picks: ${auto ?? 'nothing (no backend starts)'}\n`)
    for (const r of reports) if (r.backend !== auto) await print(`  not ${r.backend}: ${whyNot(r, auto)}\n`)
    const gemm = nativeGemmReport()
    if (gemm) for (const line of gemmLines(gemm)) await print(`${line}\n`)
    for (const e of probeDistEngines()) await print(engineLine(e)) // issue 14: MPI and NCCL
  }
}
