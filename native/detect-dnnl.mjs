#!/usr/bin/env node
// Build-time oneDNN detection for binding.gyp: `node detect-dnnl.mjs <name|define|include|libs>`
// prints one gyp value. Looks for oneDNN's C API (dnnl.h, libdnnl.so: Debian/Ubuntu libdnnl-dev,
// Homebrew onednn, a DNNLROOT install); prints "none" / nothing when it is absent, so the addon's
// products go to the BLAS or its own kernel as before. SPAN_DNNL=none forces that.
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

const multiarch = (() => {
  try {
    return readdirSync('/usr/lib').filter((d) => /-linux-gnu/.test(d)).map((d) => join('/usr/lib', d))
  } catch {
    return []
  }
})()
const roots = [process.env.DNNLROOT, '/opt/homebrew/opt/onednn', '/usr/local/opt/onednn'].filter(Boolean)
const libDirs = [...roots.map((r) => join(r, 'lib')), ...multiarch, '/usr/lib64', '/usr/lib', '/usr/local/lib']
const incDirs = [...roots.map((r) => join(r, 'include')), '/usr/include', '/usr/local/include']

function find(dirs, names) {
  for (const d of dirs) for (const n of names) if (existsSync(join(d, n))) return d
  return null
}

/** The CPU threading runtime oneDNN was built with (dnnl_config.h): OMP, SEQ, THREADPOOL or TBB. */
function runtime(inc) {
  for (const f of ['oneapi/dnnl/dnnl_config.h', 'dnnl_config.h']) {
    try {
      const m = readFileSync(join(inc, f), 'utf8').match(/#define DNNL_CPU_RUNTIME DNNL_RUNTIME_(\w+)/)
      if (m) return m[1]
    } catch {
      // next candidate
    }
  }
  return '?'
}

/** "2.6.3" from dnnl_version.h (oneapi/dnnl/ or the top-level copy). */
function version(inc) {
  for (const f of ['oneapi/dnnl/dnnl_version.h', 'dnnl_version.h']) {
    try {
      const text = readFileSync(join(inc, f), 'utf8')
      const part = (k) => text.match(new RegExp(`#define DNNL_VERSION_${k}\\s+(\\d+)`))?.[1]
      if (part('MAJOR')) return `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`
    } catch {
      // next candidate
    }
  }
  return '?'
}

function detect() {
  if (process.env.SPAN_DNNL === 'none') return {name: 'none'}
  const libDir = find(libDirs, ['libdnnl.so', 'libdnnl.dylib'])
  const incDir = find(incDirs, ['dnnl.h'])
  if (!libDir || !incDir) return {name: 'none'}
  const v = version(incDir)
  // oneDNN 2.x only: the C API this addon calls (dnnl_matmul_desc_init) was replaced in 3.0
  if (!v.startsWith('2.')) return {name: 'none'}
  // The addon runs every product on its own pool with oneDNN single-threaded inside: OpenMP's
  // per-thread omp_set_num_threads(1) (libgomp linked for it), or a sequential or threadpool
  // build (sequential when no threadpool is passed). TBB would add threads of its own: not used.
  const rt = runtime(incDir)
  if (!['OMP', 'SEQ', 'THREADPOOL'].includes(rt)) return {name: 'none'}
  const omp = rt === 'OMP' ? ['-lgomp'] : []
  return {name: `onednn ${v}`, define: rt === 'OMP' ? 'SPAN_DNNL_OMP' : 'SPAN_DNNL', include: incDir, libs: [`-L${libDir}`, '-ldnnl', ...omp, `-Wl,-rpath,${libDir}`]}
}

const found = detect()
const what = process.argv[2] ?? 'name'
const out = {name: found.name, define: found.define ?? 'SPAN_DNNL_NONE', include: found.include ?? '', libs: (found.libs ?? []).join(' ')}[what]
process.stdout.write(`${out ?? ''}\n`)
