#!/usr/bin/env node
// Builds span's two addons with node-gyp; run by the root package's `install` script:
//  - native/build/Release/span_native.node, the `native` CPU backend (native/binding.gyp);
//  - native/cuda/build/Release/span_cuda.node, the loader of the `cuda` backend
//    (native/cuda/binding.gyp), which needs no CUDA headers, nvcc or GPU to build.
// Never fails the install: when node-gyp, a compiler or Node's headers are missing it prints
// one line per addon and exits 0, and span runs without that backend (`span doctor` says
// why). SPAN_SKIP_NATIVE=1 skips both. With --if-stale (`npm run build`) it rebuilds only an
// existing build older than its sources.
import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** node-gyp: the one npm runs scripts with, else the copy bundled with npm, else npx. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ]
  for (const c of candidates) if (c && existsSync(c)) return {cmd: process.execPath, args: [c]}
  return {cmd: process.platform === 'win32' ? 'npx.cmd' : 'npx', args: ['--yes', 'node-gyp']}
}

/** Node's headers: npm's configured nodedir, else the ones installed next to this node (no download). */
function nodedir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir
  const prefix = join(dirname(process.execPath), '..')
  return existsSync(join(prefix, 'include', 'node', 'common.gypi')) ? prefix : null
}

/** The addons: where each lives, what it builds, and what to say when it did. */
const ADDONS = [
  {dir: here, product: 'span_native.node', done: () => `native backend built (BLAS: ${blasName()}; oneDNN: ${dnnlName()})`, missing: 'native backend not built', fallback: 'the wasm backend will be used'},
  {dir: join(here, 'cuda'), product: 'span_cuda.node', done: () => 'cuda loader built', missing: 'cuda loader not built', fallback: 'the cuda backend is unavailable'},
]

function dnnlName() {
  return spawnSync(process.execPath, [join(here, 'detect-dnnl.mjs'), 'name'], {encoding: 'utf8'}).stdout.trim()
}

function blasName() {
  return spawnSync(process.execPath, [join(here, 'detect-blas.mjs'), 'name'], {encoding: 'utf8'}).stdout.trim()
}

/** With --if-stale (run by `npm run build`): whether the built addon is older than a source. */
function upToDate(addon) {
  const built = join(addon.dir, 'build', 'Release', addon.product)
  if (!existsSync(built)) return false
  const sources = ['binding.gyp', ...readdirSync(join(addon.dir, 'src')).map((f) => join('src', f))]
  const own = addon.dir === here ? ['build.mjs', 'detect-blas.mjs', 'detect-dnnl.mjs', 'arch-flags.mjs'] : []
  const t = statSync(built).mtimeMs
  return [...sources, ...own].every((f) => statSync(join(addon.dir, f)).mtimeMs <= t)
}

function build(addon) {
  if (process.argv.includes('--if-stale')) {
    if (upToDate(addon) || !existsSync(join(addon.dir, 'build'))) return // fresh, or never built here (npm install's job)
  }
  const {cmd, args} = nodeGyp()
  const extra = nodedir() ? [`--nodedir=${nodedir()}`] : []
  const quiet = process.env.SPAN_NATIVE_VERBOSE !== '1'
  const r = spawnSync(cmd, [...args, 'rebuild', ...extra], {cwd: addon.dir, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8'})
  if (r.status === 0 && existsSync(join(addon.dir, 'build', 'Release', addon.product))) {
    console.log(`span: ${addon.done()}`)
    return
  }
  const why = (r.error?.message ?? `${r.stderr ?? ''}`.split('\n').filter((l) => /error/i.test(l))[0] ?? `node-gyp exited ${r.status}`).trim()
  console.log(`span: ${addon.missing} (${why.slice(0, 200)}); ${addon.fallback} (SPAN_NATIVE_VERBOSE=1 npm install shows the build log)`)
}

function main() {
  if (process.env.SPAN_SKIP_NATIVE === '1') {
    console.log('span: SPAN_SKIP_NATIVE=1, native backend not built')
    return
  }
  for (const addon of ADDONS) {
    try {
      build(addon)
    } catch (err) {
      console.log(`span: ${addon.missing} (${String(err?.message ?? err).split('\n')[0]}); ${addon.fallback}`)
    }
  }
}

main()
