import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, renameSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'

/**
 * The CUDA stand-ins (native/cuda/standin, tools/build-standins.mjs) built for tests, and the C++
 * driver of test/native/cuda/standin/harness.cc next to them: `{dir, harness}` (dir is the value
 * for SPAN_CUDA_LIBS), or `{error}` saying why they cannot be built here (no g++), for skipIf.
 * Builds are incremental, so every test file may call it.
 */
export type Standins = {dir: string; harness: string; kernels: string} | {error: string}

export const ROOT = join(import.meta.dirname, '..', '..')
const HARNESS_SRC = join(ROOT, 'test', 'native', 'cuda', 'standin', 'harness.cc')
const HARNESS_API = join(ROOT, 'test', 'native', 'cuda', 'harness-api.h') // included by harness.cc

let built: Standins | undefined

export function buildStandins(): Standins {
  if (built) return built
  const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
  if (spawnSync(cxx, ['--version']).status !== 0) return (built = {error: `${cxx} is not installed`})
  const r = spawnSync(process.execPath, [join(ROOT, 'tools', 'build-standins.mjs')], {encoding: 'utf8'})
  if (r.status !== 0) return (built = {error: `tools/build-standins.mjs failed: ${r.stderr.trim().split('\n')[0]}`})
  const dir = r.stdout.trim().split('\n').pop()!
  const harness = join(dirname(dir), 'standin-tests', 'harness')
  const abi = join(ROOT, 'native', 'cuda', 'src', 'abi.h')
  const stale = !existsSync(harness) || [HARNESS_SRC, HARNESS_API, abi].some((f) => statSync(f).mtimeMs > statSync(harness).mtimeMs)
  if (stale) {
    mkdirSync(dirname(harness), {recursive: true})
    const tmp = `${harness}.tmp-${process.pid}` // test files in parallel: each writes its own, then renames
    const c = spawnSync(cxx, ['-std=c++17', '-O2', `-I${dirname(abi)}`, HARNESS_SRC, '-o', tmp, '-ldl'], {encoding: 'utf8'})
    if (c.status !== 0) return (built = {error: `the harness failed to compile: ${c.stderr}`})
    renameSync(tmp, harness)
  }
  return (built = {dir, harness, kernels: join(ROOT, 'test', 'native', 'cuda', 'standin', 'kernels')})
}

/** Runs one harness scenario (with extra environment, e.g. SPAN_EMU_SCHEDULE) and parses its JSON line. */
export function scenario(s: Standins, name: string, args: (string | number)[] = [], env: Record<string, string> = {}): Record<string, unknown> {
  if ('error' in s) throw new Error(s.error)
  const r = spawnSync(s.harness, [s.dir, name, s.kernels, ...args.map(String)], {encoding: 'utf8', env: {...process.env, SPAN_STANDIN_QUIET: '1', ...env}})
  const line = r.stdout.trim().split('\n').pop() ?? ''
  try {
    return JSON.parse(line) as Record<string, unknown>
  } catch {
    throw new Error(`harness ${name}: exit ${r.status}, stdout ${r.stdout}, stderr ${r.stderr}`)
  }
}
