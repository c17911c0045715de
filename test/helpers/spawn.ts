/**
 * Running span as a user does: `node bin/run.js …` processes (dist/ must be built: `npm run
 * build`), and shell pipelines of them. stdout and stderr come back apart, with the exit code.
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')
export const BIN = join(ROOT, 'bin', 'run.js')

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export interface SpawnOptions {
  input?: string | Buffer
  cwd?: string // default: the repository root
  env?: NodeJS.ProcessEnv
  timeout?: number // ms
}

function run(cmd: string, args: string[], o: SpawnOptions): Run {
  const r = spawnSync(cmd, args, {cwd: o.cwd ?? ROOT, input: o.input, env: o.env, timeout: o.timeout, encoding: 'utf8', maxBuffer: 1 << 28})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** `node bin/run.js ARGS` (with this Node). */
export function runSpan(args: string[], o: SpawnOptions = {}): Run {
  return run(process.execPath, [BIN, ...args], o)
}

/** A bash script with pipefail, e.g. `node bin/run.js block x | head -1` (relative to `cwd`, the root by default). */
export function runShell(script: string, o: SpawnOptions = {}): Run {
  return run('bash', ['-c', `set -o pipefail; ${script}`], o)
}
