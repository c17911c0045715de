// `span pretrain` as a user runs it: node bin/run.js processes (dist/ must be built), stdout and
// stderr apart. Tiny shapes (1 layer, hidden 16, batch 2) on the wasm backend: seconds per run.
import {cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {loadNative} from '../../src/core/engine/native.js'
import {loadCheckpoint} from '../../src/core/model/checkpoint.js'
import {readSafetensors, toFloat32} from '../../src/core/model/safetensors.js'
import {readEvents} from '../../src/core/train/tensorboard.js'
import {fixtureVocab, header, writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-pretrain-'))
const train = join(tmp, 'train.ndjson')
const dev = join(tmp, 'dev.ndjson')
const pairs = join(tmp, 'pairs.ndjson')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--backend', 'wasm', '--seed', '4', '--lr', '1e-3']

function span(args: string[], input?: string) {
  return runSpan(args, {input})
}

const records = (stdout: string) => stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
const withoutSpeed = (r: Record<string, unknown>): Record<string, unknown> => ({...r, tokens_per_s: undefined})

beforeAll(async () => {
  writeBlocks(train, 30, 1)
  writeBlocks(dev, 4, 2)
  writeBlocks(pairs, 20, 3, true)
  await initBackend('wasm')
})

describe('span pretrain', () => {
  it('resumes exactly: steps 4–6 after a stop at 3 are those of an uninterrupted run, bit for bit', () => {
    const args = [train, ...TINY, '--max-steps', '6', '--log-every', '1', '--eval', dev, '--eval-every', '2']
    const whole = span(['pretrain', ...args, '--out', join(tmp, 'whole')])
    expect(whole.code).toBe(0)
    const first = span(['pretrain', ...args, '--stop-at', '3', '--out', join(tmp, 'part')])
    expect(first.code).toBe(0)
    expect(records(first.stdout).at(-1)).toEqual({step: 3, checkpoint: join(tmp, 'part', 'checkpoint-3')})
    const rest = span(['pretrain', '--resume', join(tmp, 'part'), '--save-every', '2']) // checkpoint-3/, whose vocab.txt the run names, is rotated away at step 4
    expect(rest.stderr).toMatch(/resuming at step 3/)
    expect(rest.code).toBe(0)
    const later = (out: string) => records(out).filter((r) => (r.step as number) > 3 && !r.checkpoint).map(withoutSpeed)
    expect(later(rest.stdout)).toEqual(later(whole.stdout))
    expect(later(whole.stdout).filter((r) => r.split === 'eval')).toHaveLength(2) // steps 4 and 6
    const end = (run: string, f: string) => readFileSync(join(tmp, run, 'checkpoint-6', f))
    expect(end('part', 'model.safetensors').equals(end('whole', 'model.safetensors'))).toBe(true)
    expect(end('part', 'optimizer.safetensors').equals(end('whole', 'optimizer.safetensors'))).toBe(true)
    // --keep 1: the newest checkpoint only, and best/ by evaluation loss, the same in both runs; span-run.json lists the run's own
    expect(readdirSync(join(tmp, 'part')).sort()).toEqual(['best', 'checkpoint-6', 'span-run.json'])
    expect(readFileSync(join(tmp, 'part', 'best', 'model.safetensors')).equals(readFileSync(join(tmp, 'whole', 'best', 'model.safetensors')))).toBe(true)
  })

  it('writes a checkpoint that loads back bit-identically, with the resolved config on stderr and beside it', async () => {
    const run = join(tmp, 'ckpt')
    const out = join(run, 'checkpoint-2')
    const cfg = join(tmp, 'cfg.json')
    writeFileSync(cfg, JSON.stringify({'max-steps': 2, lr: 0.5, 'log-every': 1}))
    const tb = join(tmp, 'tb')
    const r = span(['pretrain', train, ...TINY, '--config', cfg, '--out', run, '--tensorboard', tb])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/span pretrain: 1000 steps take about \S+ on this machine \(backend wasm, measured on step 2 of this run\); the 2 steps to go about /)
    const events = await readEvents(join(tb, readdirSync(tb)[0])) // every CRC checked
    const tags = events.flatMap((e) => e.scalars.map(({tag}) => `${tag}@${e.step}`))
    expect(tags).toEqual(expect.arrayContaining(['train/loss@1', 'train/lr@2', 'train/grad_norm@2', 'train/mlm_loss@2', 'train/sbo_acc@1']))
    const recs = records(r.stdout)
    expect(recs.map((x) => x.step)).toEqual([1, 2, 2])
    for (const k of ['loss', 'mlm_loss', 'sbo_loss', 'mlm_acc', 'sbo_acc', 'lr', 'tokens_per_s']) expect(typeof recs[0][k]).toBe('number')
    const printed = JSON.parse(/config: (.*)\n/.exec(r.stderr)![1])
    const saved = JSON.parse(readFileSync(join(out, 'train_config.json'), 'utf8'))
    expect(saved).toEqual(printed)
    expect(saved).toMatchObject({lr: 1e-3, 'max-steps': 2, hidden: 16, warmup: 1}) // flag over file over defaults
    const hf = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))
    expect(hf).toMatchObject({model_type: 'bert', hidden_size: 16, num_hidden_layers: 1, vocab_size: fixtureVocab.tokens.length, objectives: ['mlm', 'sbo']})
    expect(readFileSync(join(out, 'vocab.txt')).equals(readFileSync(fixtureVocab.info.path))).toBe(true)
    const file = await readSafetensors(join(out, 'model.safetensors'))
    const {model} = await loadCheckpoint(out)
    expect(model.params.names().sort()).toEqual([...file.tensors.keys()].sort())
    for (const [name, v] of model.params.entries()) {
      expect(Buffer.from((v.dataSync() as Float32Array).buffer).equals(Buffer.from(toFloat32(file.tensors.get(name)!).buffer)), name).toBe(true)
    }
    model.dispose()
    expect(tf.memory().numTensors).toBe(0)
  })

  it.skipIf(!loadNative().available)('on the native backend, --threads 1 and 2 give the same losses (the resolved config records the count)', () => {
    const run = (threads: number) => {
      const base = TINY.map((a) => (a === 'wasm' ? 'native' : a))
      const r = span(['pretrain', train, ...base, '--threads', String(threads), '--max-steps', '3', '--log-every', '1', '--out', join(tmp, `threads-${threads}`)])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(/config: (.*)\n/.exec(r.stderr)![1])).toMatchObject({backend: 'native', threads})
      expect(r.stderr).toContain('backend native')
      return records(r.stdout).filter((x) => x.loss !== undefined).map((x) => x.loss as number)
    }
    const one = run(1)
    const two = run(2)
    expect(one).toHaveLength(two.length)
    one.forEach((l, i) => expect(Math.abs(l - two[i])).toBeLessThan(1e-5 * Math.abs(two[i]))) // chunked sums may round differently
    expect(span(['pretrain', train, ...TINY, '--threads', '0', '--out', join(tmp, 'threads-0')]).code).not.toBe(0)
  })

  it('trains mlm,nsp on pair blocks, and mlm alone with gradient accumulation', () => {
    const nsp = span(['pretrain', pairs, ...TINY, '--objectives', 'mlm,nsp', '--max-steps', '2', '--log-every', '2', '--out', join(tmp, 'nsp')])
    expect(nsp.code).toBe(0)
    const rec = records(nsp.stdout)[0]
    expect(typeof rec.nsp_loss).toBe('number')
    expect(rec).not.toHaveProperty('sbo_loss')
    const mlm = span(['pretrain', train, ...TINY, '--objectives', 'mlm', '--max-steps', '1', '--accumulate', '3', '--out', join(tmp, 'mlm')])
    expect(mlm.code).toBe(0)
    expect(JSON.parse(readFileSync(join(tmp, 'mlm', 'checkpoint-1', 'config.json'), 'utf8')).objectives).toEqual(['mlm'])
    const state = JSON.parse(readFileSync(join(tmp, 'mlm', 'checkpoint-1', 'trainer_state.json'), 'utf8'))
    expect(state.sampler).toEqual({epoch: 0, cursor: 6}) // one step: 3 micro-batches of 2
  })
})

describe('span pretrain on bad input: one line on stderr, nothing on stdout, exit 1', () => {
  const fails = (args: string[], message: RegExp, input?: string) => {
    const r = span(['pretrain', ...args], input)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(message)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.code).toBe(1)
  }

  it('a stream from the wrong stage (token records)', () => {
    const tokens = join(tmp, 'tokens.ndjson')
    writeFileSync(tokens, `${header('tokens')}\n{"doc":0,"ids":[7,8,9]}\n`)
    fails([tokens, ...TINY, '--out', join(tmp, 'x')], /^span pretrain: .*tokens\.ndjson:1: expected a stream of masked \(from span mask\) or blocks \(from span block\), got tokens \(from span tokenize\)\n$/)
    fails([train, ...TINY, '--eval', tokens, '--out', join(tmp, 'x')], /^span pretrain: .*tokens\.ndjson:1: expected a stream of masked/) // before any step
  })

  it('ids beyond the vocabulary, a sequence longer than --max-len, a pair without a "next" label', () => {
    const big = join(tmp, 'big.ndjson')
    writeFileSync(big, `${header('blocks')}\n{"ids":[2,7,3]}\n{"ids":[2,7,99999,3]}\n`)
    fails([big, ...TINY, '--out', join(tmp, 'x')], /big\.ndjson:3: ids\[2\] = 99999 is outside the vocabulary \(size 6748\)\n$/)
    fails([train, ...TINY, '--max-len', '8', '--out', join(tmp, 'x')], /train\.ndjson:2: a sequence of \d+ tokens is longer than the 8 the model takes/)
    fails([train, ...TINY, '--objectives', 'mlm,nsp', '--out', join(tmp, 'x')], /train\.ndjson:2: the nsp objective needs examples with a "next" label/)
    fails(['-', ...TINY, '--out', join(tmp, 'x')], /^span pretrain: stdin: no training examples\n$/, '')
  })

  it('a corrupt or mismatched checkpoint for --resume', () => {
    const good = join(tmp, 'good')
    expect(span(['pretrain', train, ...TINY, '--max-steps', '1', '--out', good]).code).toBe(0)
    const cut = join(tmp, 'cut')
    cpSync(good, cut, {recursive: true})
    truncateSync(join(cut, 'checkpoint-1', 'model.safetensors'), 100)
    fails(['--resume', cut], /^span pretrain: .*cut\/checkpoint-1: inconsistent checkpoint: model\.safetensors has 100 bytes, the manifest says \d+;/)
    rmSync(join(cut, 'checkpoint-1', 'span-manifest.json')) // a checkpoint of an older span: no manifest, the file's own check
    fails(['--resume', cut], /^span pretrain: .*cut\/checkpoint-1\/model\.safetensors: /)
    const state = join(tmp, 'state')
    cpSync(good, state, {recursive: true})
    writeFileSync(join(state, 'checkpoint-1', 'trainer_state.json'), '{"format":"span-pretrain-state/1","step":-1}')
    fails(['--resume', state], /state\/checkpoint-1: inconsistent checkpoint: trainer_state\.json has \d+ bytes/)
    rmSync(join(state, 'checkpoint-1', 'span-manifest.json'))
    fails(['--resume', state], /trainer_state\.json: no valid "step"; a corrupt checkpoint/)
    fails(['--resume', good, dev, '--max-steps', '2'], /dev\.ndjson: not the data the checkpoint was trained on/)
    fails(['--resume', good], /good\/checkpoint-1: the run is at step 1, --max-steps is 1: nothing to train \(raise --max-steps\)/)
    const hidden = span(['pretrain', '--resume', good, '--hidden', '32']) // a flag typed against the saved run: a usage error
    expect([hidden.code, hidden.stderr]).toEqual([2, expect.stringMatching(/^span pretrain: flags: "hidden" is 32 but the run in .* has 16; a resumed run keeps it\n$/)])
    fails(['--resume', join(tmp, 'nowhere')], /nowhere: no train_config\.json to resume from/)
  })
})
