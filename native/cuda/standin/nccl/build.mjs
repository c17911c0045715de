#!/usr/bin/env node
// Builds the NCCL stand-in (tests only; never shipped): `node build.mjs OUTDIR` writes
// OUTDIR/libnccl.so.2, sonamed as NCCL 2.x, next to the libcuda stand-in it enqueues its
// collectives through (cuLaunchHostFunc), so that SPAN_CUDA_LIBS=OUTDIR finds it
// (src/core/dist/nccl.ts ncclLibrary). Rebuilds only when a source is newer than the library.
// Prints the library's path; exits 1 (the compiler's log on stderr) when it cannot build.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, renameSync, statSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const SONAME = 'libnccl.so.2'
const SOURCES = [join(here, 'nccl.cc')]
const DEPS = [...SOURCES, join(here, '..', '..', 'src', 'nccl-abi.h'), fileURLToPath(import.meta.url)]

const outDir = process.argv[2]
if (!outDir) {
  process.stderr.write('usage: node build.mjs OUTDIR\n')
  process.exit(2)
}
const out = join(resolve(outDir), SONAME)
const fresh = existsSync(out) && DEPS.every((d) => statSync(d).mtimeMs <= statSync(out).mtimeMs)
if (!fresh) {
  mkdirSync(dirname(out), {recursive: true})
  const tmp = `${out}.tmp-${process.pid}` // test files may build at once: each writes its own, then renames
  const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
  const args = ['-std=c++17', '-O2', '-fPIC', '-shared', '-fvisibility=hidden', '-Wall', `-Wl,-soname,${SONAME}`, ...SOURCES, '-o', tmp, '-ldl']
  const r = spawnSync(cxx, args, {encoding: 'utf8'})
  if (r.status !== 0) {
    process.stderr.write(`nccl stand-in: ${cxx} failed\n${r.stderr ?? r.error}\n`)
    process.exit(1)
  }
  renameSync(tmp, out)
}
process.stdout.write(`${out}\n`)
