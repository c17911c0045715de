// What the benches that run span and transformers side by side share (bench/encode-vs-transformers.mjs,
// bench/fill-vs-transformers.mjs): each side as its own process under /usr/bin/time, the interop venv's
// Python, the load, and a freshly initialised checkpoint in the format transformers reads.
import {spawnSync} from 'node:child_process'
import {copyFileSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {saveCheckpoint} from '../../dist/core/model/checkpoint.js'
import {presetConfig} from '../../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../../dist/core/model/pretraining.js'

const root = join(import.meta.dirname, '..', '..')

/** The 1, 5 and 15-minute load averages. */
export const loadNow = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

/** A command under /usr/bin/time: wall, CPU seconds and peak RSS (MiB), and its stdout. */
export function timed(cmd, args, statsFile) {
  const t0 = performance.now()
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', '-o', statsFile, cmd, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  const wall = (performance.now() - t0) / 1000
  if (r.status !== 0) throw new Error(`${cmd} ${args.slice(0, 2).join(' ')} failed (${r.status}): ${(r.stderr || '').trim().split('\n').at(-1)}`)
  const [user, sys, kb] = readFileSync(statsFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
  return {wall_s: +wall.toFixed(1), cpu_s: +(user + sys).toFixed(1), peak_rss_mib: Math.round(kb / 1024), stdout: r.stdout}
}

/** The interop venv's Python (made by tools/interop-env.sh when missing), or SPAN_TORCH_PYTHON. */
export function python() {
  if (process.env.SPAN_TORCH_PYTHON) return process.env.SPAN_TORCH_PYTHON
  const r = spawnSync('bash', [join(root, 'tools', 'interop-env.sh')], {cwd: root, encoding: 'utf8'})
  const dir = `${r.stdout}${r.stderr}`.match(/\((\/[^)]*venv[^)]*)\)/)?.[1]
  if (!dir) throw new Error(`tools/interop-env.sh gave no venv: ${r.stderr.trim().split('\n').at(-1)}`)
  return join(dir, 'bin', 'python')
}

/** The weights formats a bench's --format takes: what the exported folder holds. */
export const FORMATS = ['safetensors', 'pytorch', 'pytorch-legacy']

/**
 * A freshly initialised model of the preset (random weights: memory and time do not depend on them)
 * with the vocabulary at vocabPath, saved by span in tmp and rewritten by `span export` (what
 * transformers reads): the exported folder. format: `safetensors` (model.safetensors), `pytorch`
 * (pytorch_model.bin in torch.save's zip format, as `span export --format pytorch` writes it) or
 * `pytorch-legacy` (that file loaded and saved again by the interop venv's torch with
 * `_use_new_zipfile_serialization=False`: the pre-1.6 stream most older checkpoints are in).
 */
export async function exportedCheckpoint(tmp, preset, vocabPath, vocabSize, format = 'safetensors') {
  if (!FORMATS.includes(format)) throw new Error(`--format ${format}: one of ${FORMATS.join(', ')}`)
  const model = SpanBertForPreTraining.init(presetConfig(preset, vocabSize), 1)
  const own = join(tmp, 'span-ckpt')
  copyFileSync(vocabPath, join(tmp, 'vocab.txt'))
  await saveCheckpoint(own, model, join(tmp, 'vocab.txt'))
  model.dispose()
  const ckpt = join(tmp, 'hf')
  const to = format === 'safetensors' ? 'safetensors' : 'pytorch'
  const ex = spawnSync(process.execPath, [join(root, 'bin', 'run.js'), 'export', '--model', own, '--to', ckpt, '--format', to], {cwd: root, encoding: 'utf8'})
  if (ex.status !== 0) throw new Error(`span export: ${ex.stderr}`)
  if (format === 'pytorch-legacy') {
    const bin = join(ckpt, 'pytorch_model.bin')
    const code = 'import sys, torch; torch.save(torch.load(sys.argv[1], weights_only=True), sys.argv[1], _use_new_zipfile_serialization=False)'
    const py = spawnSync(python(), ['-c', code, bin], {cwd: root, encoding: 'utf8'})
    if (py.status !== 0) throw new Error(`legacy torch.save: ${py.stderr}`)
  }
  return ckpt
}
