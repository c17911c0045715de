// `span …` as a child process for the benchmarks that drive the commands end to end.
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'run.js')

/**
 * Runs `span ARGS` (stdin from `input`, stdout also to `stdoutFile` when given); returns stdout,
 * stderr and seconds. A failure ends the benchmark with the command's stderr and exit 1.
 */
export function spanSync(args, {input, stdoutFile} = {}) {
  const t0 = performance.now()
  const r = spawnSync('node', [BIN, ...args], {input, encoding: 'utf8', maxBuffer: 1 << 30})
  const secs = (performance.now() - t0) / 1000
  if (r.status !== 0) {
    process.stderr.write(`span ${args.join(' ')} failed (${r.status}):\n${r.stderr}`)
    process.exit(1)
  }
  if (stdoutFile) writeFileSync(stdoutFile, r.stdout)
  return {stdout: r.stdout, stderr: r.stderr, secs}
}
