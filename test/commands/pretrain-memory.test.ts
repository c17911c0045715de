// The memory plan of `span pretrain` as a user meets it (node bin/run.js; dist/ must be built):
// the plan on stderr before step 1, --batch-size auto's choice, a run that cannot fit refused
// with nothing written, and the plan against the peak resident memory the run measures
// (README "Memory plan"). SPAN_MEMORY_AVAILABLE stands in for the machine's available memory.
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {Rng} from '../../src/core/data/rng.js'
import {loadNative} from '../../src/core/engine/native.js'
import {presetConfig} from '../../src/core/model/config.js'
import {HEADROOM, planMemory} from '../../src/core/train/memory-plan.js'
import {fixtureVocab, header} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-pretrain-memory-'))
const MiB = 2 ** 20

/** `count` blocks of exactly `len` tokens: every batch is padded to len, as the plan assumes. */
function fullBlocks(len: number, count: number): string {
  const path = join(tmp, `full-${len}.ndjson`)
  const rng = new Rng(len)
  const {cls, sep} = fixtureVocab.special
  const lines = [header('blocks')]
  for (let i = 0; i < count; i++)
    lines.push(JSON.stringify({doc: i, ids: [cls, ...Array.from({length: len - 2}, () => 5 + rng.int(fixtureVocab.tokens.length - 5)), sep]}))
  writeFileSync(path, lines.join('\n') + '\n')
  return path
}

const tiny = presetConfig('tiny', fixtureVocab.tokens.length)
const SMALL = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--backend', 'wasm'] // seconds on wasm
const small = presetConfig('tiny', fixtureVocab.tokens.length, {num_hidden_layers: 1, hidden_size: 16, num_attention_heads: 2, intermediate_size: 64})
const planned = (batch: number, len: number, model = tiny) => planMemory({model, batch, seqLen: len, ratio: 0.15, examples: 40, pool: 'share'}).total // native: its buffer pool is in the plan
const env = (bytes: number) => ({...process.env, SPAN_MEMORY_AVAILABLE: String(Math.ceil(bytes))})
const mib = (v: string, unit: string) => Number(v) * (unit === 'GiB' ? 1024 : 1)

describe('span pretrain: the memory plan', () => {
  const blocks512 = fullBlocks(512, 40)
  const blocks128 = fullBlocks(128, 40)

  it('refuses a run that cannot fit: one line with what would fit, exit 1, nothing written', () => {
    const out = join(tmp, 'refused')
    const r = runSpan(['pretrain', blocks512, '--preset', 'tiny', '--batch-size', '32', '--max-steps', '2', '--out', out], {
      env: env(planned(8, 512) / HEADROOM + MiB),
    })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^span pretrain: needs about \S+ GiB \(2 layers of 128, 32 × 512 tokens, fp32\) but 80% of the \S+ MiB SPAN_MEMORY_AVAILABLE is \S+ MiB; would fit: --batch-size 8 --accumulate 4 \(the same effective batch, \S+ MiB\)$/,
    )
    expect(existsSync(out)).toBe(false)
    expect(readdirSync(tmp).filter((n) => n.includes('refused'))).toEqual([]) // no lock left either
  })

  it('--batch-size auto (the default) takes the largest micro-batch that fits and accumulates to the effective batch', () => {
    const out = join(tmp, 'auto')
    const room = env(planned(8, 128, small) / HEADROOM + 0.1 * MiB)
    const r = runSpan(['pretrain', blocks128, ...SMALL, '--max-steps', '1', '--out', out], {env: room})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(
      /span pretrain: --batch-size auto: 8 × --accumulate 4 = the effective batch 32 \(the largest micro-batch of it that fits under 80% of the SPAN_MEMORY_AVAILABLE\)\n/,
    )
    expect(r.stderr).toMatch(
      /span pretrain: memory plan \(fp32, backend wasm\): \S+M parameters, weights \S+ MiB, gradients and AdamW state \S+ MiB; activations \S+ MiB and decoder logits \S+ MiB for a micro-batch of 8 × 128 tokens; runtime \S+ MiB; about \S+ MiB at the peak of \S+ MiB SPAN_MEMORY_AVAILABLE \(a run may plan 80% of it\)\n/,
    )
    expect(r.stderr).toContain('span pretrain: effective batch 32: 1 process × --batch-size 8 × --accumulate 4\n')
    expect(r.stderr).toMatch(/ s a step\)\n/) // the time per step, once measured
    const saved = JSON.parse(readFileSync(join(out, 'checkpoint-1', 'train_config.json'), 'utf8'))
    expect([saved['batch-size'], saved.accumulate]).toEqual([8, 4]) // a resume keeps the choice
    const more = runSpan(['pretrain', blocks128, ...SMALL, '--max-steps', '1', '--effective-batch', '16', '--out', join(tmp, 'auto16')], {env: room})
    expect(more.stderr).toContain('--batch-size auto: 8 × --accumulate 2 = the effective batch 16')
  })

  it.skipIf(!loadNative().available).each([128, 512])('plans within a quarter of the peak resident memory it measures (tiny, length %i, native)', (len) => {
    const r = runSpan([
      'pretrain',
      len === 512 ? blocks512 : blocks128,
      '--preset',
      'tiny',
      '--batch-size',
      '8',
      '--max-steps',
      '2',
      '--backend',
      'native',
      '--out',
      join(tmp, `peak-${len}`),
    ])
    expect(r.code, r.stderr).toBe(0)
    const m = /span pretrain: peak resident memory ([\d.]+) (MiB|GiB) \(the memory plan said about ([\d.]+) (MiB|GiB)\)/.exec(r.stderr)
    expect(m).not.toBeNull()
    const [peak, plan] = [mib(m![1], m![2]), mib(m![3], m![4])]
    expect(Math.abs(plan - peak) / peak).toBeLessThan(0.25)
  })
})
