/**
 * Running span as a user does: `node bin/run.js …` processes (dist/ must be built: `npm run
 * build`), and shell pipelines of them. stdout and stderr come back apart, with the exit code.
 */
import {spawn, spawnSync} from 'node:child_process'
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

/** A finished process without the exit code's null (a signal gives -1). */
export interface AsyncRun {
  code: number
  stdout: string
  stderr: string
}

/** As `run`, without blocking this process: several at once, or a signal sent meanwhile. */
function spawnCollect(cmd: string, args: string[], cwd: string): Promise<AsyncRun> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, {cwd, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('close', (code) => resolve({code: code ?? -1, stdout, stderr}))
  })
}

/** `node bin/run.js ARGS` in `cwd`, asynchronously. */
export const spanAsync = (args: string[], cwd: string): Promise<AsyncRun> => spawnCollect(process.execPath, [BIN, ...args], cwd)

/** A bash line in `cwd`, asynchronously; the exit code is the first command's of a pipe (`a | head`). */
export const shellAsync = (line: string, cwd: string): Promise<AsyncRun> => spawnCollect('bash', ['-c', `${line}; exit \${PIPESTATUS[0]}`], cwd)

/** Runs the jobs at most `n` at a time (the machine is shared), results in job order. */
export async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]()
    }
  }
  await Promise.all(Array.from({length: n}, worker))
  return out
}
