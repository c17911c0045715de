/**
 * The Python side of span's interop tests (issue 34): the venv tools/interop-env.sh makes outside
 * the clone (its folder keyed by a hash of tools/interop-requirements.txt, as the script computes
 * it), the versions of the packages in it, and a way to run a Python script there. A test that
 * needs a package the venv lacks skips, naming the package and how to get it.
 */
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const requirements = join(root, 'tools', 'interop-requirements.txt')

/** The venv's folder: SPAN_INTEROP_VENV, else the one tools/interop-env.sh makes. */
export const VENV = ((): string => {
  if (process.env.SPAN_INTEROP_VENV) return process.env.SPAN_INTEROP_VENV
  const key = createHash('sha256').update(readFileSync(requirements)).digest('hex').slice(0, 16)
  const cache = process.env.SPAN_INTEROP_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'span-interop')
  return join(cache, `venv-${key}`)
})()

export const PYTHON = join(VENV, 'bin', 'python')

/** The list's package names, and tokenizers (transformers' fast tokenizers, which it brings). */
const NAMES = [
  ...readFileSync(requirements, 'utf8')
    .split('\n')
    .map((l) =>
      l
        .replace(/#.*/, '')
        .replace(/[<>=!~ ].*/, '')
        .trim(),
    )
    .filter(Boolean),
  'tokenizers',
]

/** name → version of each package of the list the venv has (one Python start, no imports). */
export const VERSIONS: Record<string, string> = ((): Record<string, string> => {
  if (!existsSync(PYTHON)) return {}
  const code =
    'import sys, json, importlib.metadata as m\nv = {}\nfor n in sys.argv[1:]:\n  try: v[n] = m.version(n)\n  except Exception: pass\nprint(json.dumps(v))'
  const r = spawnSync(PYTHON, ['-c', code, ...NAMES], {encoding: 'utf8'})
  return r.status === 0 ? (JSON.parse(r.stdout) as Record<string, string>) : {}
})()

/** Why a test needing these packages cannot run, or null when the venv has them all. */
export function lacking(...packages: string[]): string | null {
  if (!existsSync(PYTHON)) return `no interop venv at ${VENV} (tools/interop-env.sh or npm run interop makes it)`
  const absent = packages.filter((p) => !VERSIONS[p])
  return absent.length ? `${absent.join(', ')} not in the interop venv ${VENV} (tools/interop-env.sh installs it)` : null
}

/** A test title with the skip reason appended when there is one. */
export const titled = (title: string, why: string | null): string => (why ? `${title} (skipped: ${why})` : title)

/** Runs a Python script of test/interop/py/ (or `-c CODE`) in the venv; throws with its stderr when it fails. */
export function python(script: string, args: string[], input?: string): string {
  const file = script.startsWith('-c') ? null : join(import.meta.dirname, '..', 'interop', 'py', script)
  const argv = file ? [file, ...args] : ['-c', script.slice(2), ...args]
  const r = spawnSync(PYTHON, argv, {
    encoding: 'utf8',
    input,
    maxBuffer: 1 << 30,
    env: {...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false', PYTHONWARNINGS: 'ignore'},
  })
  if (r.status !== 0) throw new Error(`${script} exited ${r.status}: ${r.stderr.slice(-4000)}`)
  return r.stdout
}

/** The version line the tests print in their titles, e.g. "transformers 5.18.0". */
export const version = (name: string): string => `${name} ${VERSIONS[name] ?? '(absent)'}`

/** The venv's site-packages/nvidia folder (NVIDIA's wheels: cu13/{include,lib}, nccl/{include,lib}), or null. */
export const NVIDIA = ((): string | null => {
  const lib = join(VENV, 'lib')
  const py = existsSync(lib) ? readdirSync(lib).find((d) => d.startsWith('python')) : undefined
  const dir = py ? join(lib, py, 'site-packages', 'nvidia') : null
  return dir && existsSync(dir) ? dir : null
})()

/** A file of NVIDIA's wheels in the venv (e.g. 'cu13/lib/libnvrtc.so.13'), or null when absent. */
export const wheelFile = (rel: string): string | null => (NVIDIA && existsSync(join(NVIDIA, rel)) ? join(NVIDIA, rel) : null)
