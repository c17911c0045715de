#!/usr/bin/env node
// Builds the native addon (native/build/Release/span_native.node) with node-gyp; run by the
// root package's `install` script. Never fails the install: when node-gyp, a compiler or
// Node's headers are missing it prints one line and exits 0, and span runs without the
// `native` backend (`span doctor` says why). SPAN_SKIP_NATIVE=1 skips the build. With
// --if-stale (`npm run build`) it rebuilds only an existing build older than its sources.
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

/** With --if-stale (run by `npm run build`): whether the built addon is older than a source. */
function upToDate() {
  const built = join(here, 'build', 'Release', 'span_native.node')
  if (!existsSync(built)) return false
  const sources = ['binding.gyp', 'build.mjs', 'detect-blas.mjs', ...readdirSync(join(here, 'src')).map((f) => join('src', f))]
  const t = statSync(built).mtimeMs
  return sources.every((f) => statSync(join(here, f)).mtimeMs <= t)
}

function main() {
  if (process.env.SPAN_SKIP_NATIVE === '1') {
    console.log('span: SPAN_SKIP_NATIVE=1, native backend not built')
    return
  }
  if (process.argv.includes('--if-stale')) {
    if (upToDate() || !existsSync(join(here, 'build'))) return // fresh, or never built here (npm install's job)
  }
  const {cmd, args} = nodeGyp()
  const extra = nodedir() ? [`--nodedir=${nodedir()}`] : []
  const quiet = process.env.SPAN_NATIVE_VERBOSE !== '1'
  const r = spawnSync(cmd, [...args, 'rebuild', ...extra], {cwd: here, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8'})
  if (r.status === 0 && existsSync(join(here, 'build', 'Release', 'span_native.node'))) {
    const blas = spawnSync(process.execPath, [join(here, 'detect-blas.mjs'), 'name'], {encoding: 'utf8'}).stdout.trim()
    console.log(`span: native backend built (BLAS: ${blas})`)
    return
  }
  const why = (r.error?.message ?? `${r.stderr ?? ''}`.split('\n').filter((l) => /error/i.test(l))[0] ?? `node-gyp exited ${r.status}`).trim()
  console.log(`span: native backend not built (${why.slice(0, 200)}); the wasm backend will be used (SPAN_NATIVE_VERBOSE=1 npm install shows the build log)`)
}

main()
