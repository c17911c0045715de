#!/usr/bin/env node
// Builds the test-only stand-ins of the CUDA libraries (native/cuda/standin/*/: the libcuda and
// libnvrtc stand-ins over the CUDA-C emulator, and any folder with its own build.mjs, such as
// the cuBLASLt stand-in) into a git-ignored folder, build/standins/ by default, and prints that
// folder on its last line: the value for SPAN_CUDA_LIBS (docs/cuda-standins.md).
//   node tools/build-standins.mjs [--out DIR] [--force]      (npm run standins)
// A folder with a build.mjs is run as `node build.mjs OUT_DIR` and must leave its library in
// OUT_DIR. Sources are rebuilt only when newer than what they built, unless --force. Needs g++
// (SPAN_EMU_CXX or CXX to name another); exits 1 with one line when it fails.
import {spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, readdirSync, renameSync, statSync} from 'node:fs'
import {join, resolve} from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const STANDIN = join(ROOT, 'native', 'cuda', 'standin')
const args = process.argv.slice(2)
const outArg = args.indexOf('--out')
const OUT = resolve(outArg >= 0 ? args[outArg + 1] : join(ROOT, 'build', 'standins'))
const FORCE = args.includes('--force')
const CXX = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
const FLAGS = ['-std=c++17', '-O2', '-fPIC', '-shared', '-fvisibility=hidden', '-Wall', '-Wno-unused-function']

/** The libraries built here: each from the .cc files of its folders. */
const LIBS = [
  {name: 'libcuda.so.1', dirs: ['cuda', 'emu'], libs: ['-ldl']},
  {name: 'libnvrtc.so.13', dirs: ['nvrtc'], libs: ['-ldl']},
]

const sourcesOf = (dir) =>
  readdirSync(join(STANDIN, dir))
    .filter((f) => /\.(cc|h)$/.test(f))
    .map((f) => join(STANDIN, dir, f))
const headersOf = (dir) => (existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [])
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0)

function die(msg) {
  console.error(`build-standins: ${msg}`)
  process.exit(1)
}

function buildLib(lib) {
  const inputs = [...lib.dirs.flatMap(sourcesOf), ...headersOf(join(STANDIN, 'emu', 'include'))]
  const out = join(OUT, lib.name)
  // spread-ok: a stand-in's few source files
  if (!FORCE && mtime(out) > Math.max(...inputs.map(mtime))) return
  const cc = inputs.filter((f) => f.endsWith('.cc'))
  const tmp = `${out}.tmp-${process.pid}` // test files may build at once: each writes its own, then renames
  const r = spawnSync(CXX, [...FLAGS, ...cc, '-o', tmp, ...lib.libs], {encoding: 'utf8'})
  if (r.error) die(`${CXX} not found (${r.error.message}): the stand-ins need a C++ compiler`)
  if (r.status !== 0) die(`${lib.name} failed to compile:\n${r.stderr}`)
  renameSync(tmp, out)
}

/** A stand-in folder with its own build script (e.g. cublaslt). */
function buildOwn(dir) {
  const r = spawnSync(process.execPath, [join(STANDIN, dir, 'build.mjs'), OUT], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
  if (r.status !== 0) die(`native/cuda/standin/${dir}/build.mjs failed:\n${r.stderr}${r.stdout}`)
}

mkdirSync(OUT, {recursive: true})
cpSync(join(STANDIN, 'emu', 'include'), join(OUT, 'span-emu', 'include'), {recursive: true})
for (const lib of LIBS) buildLib(lib)
const known = new Set(LIBS.flatMap((l) => l.dirs))
for (const dir of readdirSync(STANDIN).filter((d) => statSync(join(STANDIN, d)).isDirectory())) {
  if (existsSync(join(STANDIN, dir, 'build.mjs'))) buildOwn(dir)
  else if (!known.has(dir)) console.error(`build-standins: native/cuda/standin/${dir} has no build.mjs; skipped`)
}
console.log(OUT)
