#!/usr/bin/env node
// Build-time BLAS detection for binding.gyp: `node detect-blas.mjs <name|define|include|libs>`
// prints one gyp value. Looks for a CBLAS header and library: OpenBLAS (Debian/Ubuntu
// libopenblas-dev, Homebrew, Fedora), BLIS, Apple Accelerate; prints "builtin" / nothing when
// none is found, so the addon falls back to its own GEMM kernel. SPAN_BLAS=none forces that.
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'

const multiarch = (() => {
  try {
    return readdirSync('/usr/lib').filter((d) => /-linux-gnu/.test(d)).map((d) => join('/usr/lib', d))
  } catch {
    return []
  }
})()
const libDirs = [...multiarch, '/usr/lib64', '/usr/lib', '/usr/local/lib', '/opt/homebrew/opt/openblas/lib', '/usr/local/opt/openblas/lib']
const incDirs = [
  ...multiarch.map((d) => d.replace('/usr/lib/', '/usr/include/')),
  '/usr/include/openblas', '/usr/include', '/usr/local/include', '/opt/homebrew/opt/openblas/include', '/usr/local/opt/openblas/include',
]

function find(dirs, names) {
  for (const d of dirs) for (const n of names) if (existsSync(join(d, n))) return d
  return null
}

function detect() {
  if (process.env.SPAN_BLAS === 'none') return {name: 'builtin'}
  if (process.platform === 'darwin') return {name: 'accelerate', define: 'SPAN_BLAS_ACCELERATE', libs: ['-framework Accelerate']}
  const candidates = [
    {name: 'openblas', define: 'SPAN_BLAS_OPENBLAS', lib: 'openblas', headers: ['cblas.h'], incs: incDirs},
    {name: 'blis', define: 'SPAN_BLAS_BLIS', lib: 'blis', headers: ['cblas.h', 'blis/cblas.h'], incs: ['/usr/include/blis', '/usr/local/include/blis', ...incDirs]},
  ]
  for (const c of candidates) {
    const libDir = find(libDirs, [`lib${c.lib}.so`, `lib${c.lib}.dylib`])
    const incDir = find(c.incs, c.headers)
    if (libDir && incDir) return {name: c.name, define: c.define, include: incDir, libs: [`-L${libDir}`, `-l${c.lib}`, `-Wl,-rpath,${libDir}`]}
  }
  return {name: 'builtin'}
}

const found = detect()
const what = process.argv[2] ?? 'name'
const out = {name: found.name, define: found.define ?? 'SPAN_BLAS_NONE', include: found.include ?? '', libs: (found.libs ?? []).join(' ')}[what]
process.stdout.write(`${out ?? ''}\n`)
