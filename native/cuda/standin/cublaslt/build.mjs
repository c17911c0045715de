#!/usr/bin/env node
// Builds the cuBLASLt stand-in (tests only; never shipped): `node build.mjs OUTDIR` writes
// OUTDIR/libcublasLt.so.13, named and sonamed as the CUDA 13 library span's loader looks for
// (src/core/engine/cuda/libs.ts), so that SPAN_CUDA_LIBS=OUTDIR finds it. GEMM through OpenBLAS's
// CBLAS when native/detect-blas.mjs finds it, else the stand-in's naive loop. Rebuilds only when
// a source is newer than the library. Prints the library's path; exits 1 (the compiler's log on
// stderr) when it cannot build.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, statSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const SONAME = 'libcublasLt.so.13'
const SOURCES = ['cublaslt.cc', 'problem.cc'].map((f) => join(here, f))
const DEPS = [...SOURCES, join(here, 'problem.h'), join(here, '..', '..', 'src', 'abi.h'), fileURLToPath(import.meta.url)]

const outDir = process.argv[2]
if (!outDir) {
  process.stderr.write('usage: node build.mjs OUTDIR\n')
  process.exit(2)
}
const out = join(resolve(outDir), SONAME)

function blas(what) {
  const r = spawnSync(process.execPath, [join(here, '..', '..', '..', 'detect-blas.mjs'), what], {encoding: 'utf8'})
  return r.stdout.trim()
}

const fresh = existsSync(out) && DEPS.every((d) => statSync(d).mtimeMs <= statSync(out).mtimeMs)
if (!fresh) {
  mkdirSync(dirname(out), {recursive: true})
  const useBlas = blas('name') === 'openblas'
  const blasFlags = useBlas ? [`-DSPAN_BLAS_OPENBLAS`, `-I${blas('include')}`] : []
  const blasLibs = useBlas ? blas('libs').split(' ').filter(Boolean) : []
  const args = ['-std=c++17', '-O2', '-fPIC', '-shared', '-Wall', `-Wl,-soname,${SONAME}`, ...blasFlags, ...SOURCES, '-o', out, ...blasLibs]
  const r = spawnSync(process.env.CXX ?? 'g++', args, {encoding: 'utf8'})
  if (r.status !== 0) {
    process.stderr.write(`cublasLt stand-in: ${process.env.CXX ?? 'g++'} failed\n${r.stderr ?? r.error}\n`)
    process.exit(1)
  }
}
process.stdout.write(`${out}\n`)
