#!/usr/bin/env node
// The CUDA-C emulator's speed (docs/cuda-standins.md): a LayerNorm kernel (one block per row,
// shuffles and a shared array: test/native/cuda/standin/kernels/layernorm.cu) launched through
// the libcuda stand-in, 64 blocks × 256 threads and 512 × 128 (C = 768), under each schedule:
// wall milliseconds per launch (after a warm-up), with the machine's load beside them. Builds
// the stand-ins (tools/build-standins.mjs) and the test harness first; needs g++.
import {spawnSync} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import {loadavg} from 'node:os'
import {dirname, join} from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
const built = spawnSync(process.execPath, [join(ROOT, 'tools', 'build-standins.mjs')], {encoding: 'utf8'})
if (built.status !== 0) {
  console.log(`cuda-emu: skipped (${built.stderr.trim().split('\n')[0]})`)
  process.exit(0)
}
const dir = built.stdout.trim().split('\n').pop()
const harness = join(dirname(dir), 'standin-tests', 'harness-bench')
mkdirSync(dirname(harness), {recursive: true})
const src = join(ROOT, 'test', 'native', 'cuda', 'standin')
const c = spawnSync(cxx, ['-std=c++17', '-O2', `-I${join(ROOT, 'native', 'cuda', 'src')}`, join(src, 'harness.cc'), '-o', harness, '-ldl'], {encoding: 'utf8'})
if (c.status !== 0) throw new Error(c.stderr)

const REPEAT = 10
console.log(`load average ${loadavg()[0].toFixed(1)} on ${spawnSync('nproc', {encoding: 'utf8'}).stdout.trim()} cores; ${REPEAT} launches each`)
for (const schedule of ['inorder', 'warp', 'random']) {
  for (const [rows, block] of [
    [64, 256],
    [512, 128],
  ]) {
    const env = {...process.env, SPAN_EMU_SCHEDULE: schedule, HARNESS_REPEAT: String(REPEAT)}
    const r = spawnSync(harness, [dir, 'layernorm', join(src, 'kernels'), String(rows), '768', String(block)], {encoding: 'utf8', env})
    const out = JSON.parse(r.stdout.trim().split('\n').pop())
    console.log(`${schedule.padEnd(8)} ${String(rows).padStart(3)} × ${block}: ${out.ms.toFixed(1)} ms per launch, max error ${out.maxRelErr}`)
  }
}
