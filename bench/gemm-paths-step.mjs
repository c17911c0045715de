#!/usr/bin/env node
// A whole training step on each matrix-product path of the native addon (SPAN_GEMM_PATH), interleaved:
// what decides the default path is the step, not one product (bench/gemm.mjs times those alone).
//   npm run build && node bench/gemm-paths-step.mjs [presets] [--paths avx512,onednn] [--rounds 3]
//     [--precisions fp32,bf16] [--threads N]
// presets default mini,base (bench/native.mjs's batches: mini 16 × 128, base 8 × 128). Each round runs
// every preset × precision × path once, each in its own process (bench/native.mjs --only step), the
// paths' order alternating between rounds. Prints one JSON line per run, then per preset × precision
// the median step time per path and every round's ratio against the first path.
import {spawnSync} from 'node:child_process'
import {loadavg} from 'node:os'
import {join} from 'node:path'

const argv = process.argv.slice(2)
const opt = (name, d) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv.splice(i, 2)[1] : d
}
const paths = opt('--paths', 'avx512,onednn').split(',')
const rounds = Number(opt('--rounds', '3'))
const precisions = opt('--precisions', 'fp32,bf16').split(',')
const threads = opt('--threads')
const presets = (argv[0] ?? 'mini,base').split(',')
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** One step measurement on one path: bench/native.mjs's step line. */
function step(preset, precision, path) {
  const args = [join(import.meta.dirname, 'native.mjs'), preset, 'native', '--only', 'step', '--precision', precision]
  if (threads) args.push('--threads', threads)
  const r = spawnSync('node', args, {encoding: 'utf8', env: {...process.env, SPAN_GEMM_PATH: path}})
  const line = r.stdout.split('\n').find((l) => l.includes('"bench":"step"'))
  if (!line) throw new Error(`bench/native.mjs ${preset} on ${path}: ${r.stderr.trim().split('\n').at(-1)}`)
  return JSON.parse(line)
}

const runs = []
console.log(JSON.stringify({bench: 'gemm-paths-step', paths, rounds, load: loadavg().map((x) => +x.toFixed(2))}))
for (let round = 1; round <= rounds; round++)
  for (const preset of presets)
    for (const precision of precisions)
      for (const path of round % 2 ? paths : paths.slice().reverse()) {
        const s = step(preset, precision, path)
        const run = {round, preset, precision, path, step_ms: s.step_ms, step_cpu_ms: s.step_cpu_ms, tokens_per_s: s.tokens_per_s}
        runs.push(run)
        console.log(JSON.stringify(run))
      }
for (const preset of presets)
  for (const precision of precisions) {
    const of = (path) => runs.filter((r) => r.preset === preset && r.precision === precision && r.path === path)
    const base = of(paths[0])
    const line = {preset, precision, median_step_ms: Object.fromEntries(paths.map((p) => [p, median(of(p).map((r) => r.step_ms))]))}
    for (const p of paths.slice(1)) line[`${p}_over_${paths[0]}`] = of(p).map((r, i) => +(r.step_ms / base[i].step_ms).toFixed(3))
    console.log(JSON.stringify(line))
  }
console.log(JSON.stringify({load_end: loadavg().map((x) => +x.toFixed(2))}))
