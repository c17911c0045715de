import {existsSync, readdirSync, statSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

/**
 * Where the `cuda` backend looks for the CUDA libraries it opens at run time (native/cuda,
 * dlopen): the driver (libcuda.so.1), NVRTC with its builtins, and cuBLASLt. Each library's
 * candidates, in order:
 *  1. every folder of SPAN_CUDA_LIBS (colon-separated);
 *  2. NVIDIA's Python wheel folders under any site-packages (nvidia/cu13/lib, nvidia/cublas/lib,
 *     nvidia/cuda_nvrtc/lib, …: what `pip install nvidia-cublas-cu12` or torch installs);
 *  3. CUDA_HOME, then CUDA_PATH (lib64, lib, targets/x86_64-linux/lib);
 *  4. the system loader (the bare soname: LD_LIBRARY_PATH, ld.so.cache).
 * The driver is never taken from a toolkit or a wheel (their libcuda is a link-time stub), only
 * from SPAN_CUDA_LIBS and the system loader. Pure over a file-system view, for tests.
 */
export type CudaLib = 'cuda' | 'nvrtcBuiltins' | 'nvrtc' | 'cublasLt'

/** File names each library may have: a soname with an optional version (libnvrtc.so.13, libnvrtc-builtins.so.13.0). */
const PATTERNS: Record<CudaLib, RegExp> = {
  cuda: /^libcuda\.so\.1$/,
  nvrtcBuiltins: /^libnvrtc-builtins\.so(\.\d+)*$/,
  nvrtc: /^libnvrtc\.so(\.\d+)*$/,
  cublasLt: /^libcublasLt\.so(\.\d+)*$/,
}

/** What the system loader is asked for when no folder had the library, newest CUDA first. */
const SONAMES: Record<CudaLib, string[]> = {
  cuda: ['libcuda.so.1'],
  nvrtcBuiltins: ['libnvrtc-builtins.so.13', 'libnvrtc-builtins.so.12', 'libnvrtc-builtins.so'],
  nvrtc: ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so'],
  cublasLt: ['libcublasLt.so.13', 'libcublasLt.so.12', 'libcublasLt.so'],
}

/** Folders of NVIDIA's wheels under a site-packages, newest layout first (CUDA 13 ships one folder). */
export const WHEEL_DIRS = ['nvidia/cu13/lib', 'nvidia/cu12/lib', 'nvidia/cublas/lib', 'nvidia/cuda_nvrtc/lib', 'nvidia/cuda_runtime/lib']

export const CUDA_LIB_NAMES: readonly CudaLib[] = ['cuda', 'nvrtcBuiltins', 'nvrtc', 'cublasLt']

/** The file system as the search sees it (tests pass a fake). */
export interface SearchFs {
  isDir(path: string): boolean
  list(path: string): string[]
}

export const realFs: SearchFs = {
  isDir: (p) => existsSync(p) && statSync(p).isDirectory(),
  list: (p) => {
    try {
      return readdirSync(p)
    } catch {
      return []
    }
  },
}

export interface SearchEnv {
  env: Record<string, string | undefined>
  home: string
  fs: SearchFs
}

export const realSearchEnv = (): SearchEnv => ({env: process.env, home: homedir(), fs: realFs})

/** Splits a colon-separated list of folders, dropping empty entries. */
const folders = (v: string | undefined): string[] => (v ?? '').split(':').filter((s) => s.length > 0)

/** pythonX.Y folders under `lib` of a prefix, each with its site-packages and dist-packages. */
function pythonLibs(fs: SearchFs, prefix: string): string[] {
  const lib = join(prefix, 'lib')
  const versions = fs
    .list(lib)
    .filter((n) => /^python3(\.\d+)?$/.test(n))
    .sort()
    .reverse()
  return versions.flatMap((v) => [join(lib, v, 'site-packages'), join(lib, v, 'dist-packages')])
}

/**
 * The site-packages folders to look in, in order: PYTHONPATH, the active virtualenv and conda
 * environment, the user's ~/.local, then /usr/local and /usr (Debian's dist-packages too).
 */
export function sitePackages({env, home, fs}: SearchEnv): string[] {
  const prefixes = [env.VIRTUAL_ENV, env.CONDA_PREFIX, join(home, '.local'), '/usr/local', '/usr'].filter((p): p is string => Boolean(p))
  const all = [...folders(env.PYTHONPATH), ...prefixes.flatMap((p) => pythonLibs(fs, p)), '/usr/lib/python3/dist-packages']
  return [...new Set(all)].filter((d) => fs.isDir(d))
}

/** Toolkit folders of CUDA_HOME then CUDA_PATH. */
function toolkitDirs(env: SearchEnv['env']): string[] {
  const roots = [env.CUDA_HOME, env.CUDA_PATH].filter((r): r is string => Boolean(r))
  return roots.flatMap((r) => ['lib64', 'lib', 'targets/x86_64-linux/lib'].map((d) => join(r, d)))
}

/** The folders searched for `lib`, in order (before the system loader). */
export function searchDirs(lib: CudaLib, s: SearchEnv): string[] {
  const own = folders(s.env.SPAN_CUDA_LIBS)
  if (lib === 'cuda') return own // the driver: never a toolkit's or wheel's stub
  const wheels = sitePackages(s).flatMap((sp) => WHEEL_DIRS.map((w) => join(sp, w)))
  return [...own, ...wheels, ...toolkitDirs(s.env)]
}

/** Version numbers of a file name's suffix, for newest-first order (libnvrtc.so.13.0 → [13, 0]). */
function versionOf(name: string): number[] {
  return (name.match(/\.so((\.\d+)*)$/)?.[1] ?? '').split('.').filter(Boolean).map(Number)
}

function newestFirst(a: string, b: string): number {
  const [x, y] = [versionOf(a), versionOf(b)]
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? -1) !== (y[i] ?? -1)) return (y[i] ?? -1) - (x[i] ?? -1)
  return 0
}

/** Every candidate for `lib`: matching files of each folder (newest version first), then the bare sonames. */
export function candidates(lib: CudaLib, s: SearchEnv = realSearchEnv()): string[] {
  const found = searchDirs(lib, s).flatMap((dir) =>
    s.fs.isDir(dir)
      ? s.fs
          .list(dir)
          .filter((n) => PATTERNS[lib].test(n))
          .sort(newestFirst)
          .map((n) => join(dir, n))
      : [],
  )
  return [...new Set([...found, ...SONAMES[lib]])]
}

/** The candidates of every library, in the order the addon opens them (builtins before NVRTC). */
export function allCandidates(s: SearchEnv = realSearchEnv()): Record<CudaLib, string[]> {
  return Object.fromEntries(CUDA_LIB_NAMES.map((l) => [l, candidates(l, s)])) as Record<CudaLib, string[]>
}
