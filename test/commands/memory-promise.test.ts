// Issue 36, cause 3: the memory plan is a promise. A `small` run at 512 tokens on the native
// backend with SPAN_MEMORY_AVAILABLE capped planned 753 MiB and peaked at 1.28 GiB: the native
// buffer pool (engine/native-pool.ts) was neither planned nor held. Through bin/run.js: the plan
// names the pool, and the peak resident memory the run measures stays under its plan.
// (Absurd batch flags as usage errors: checks-first.test.ts.)
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadNative} from '../../src/core/engine/native.js'
import {runSpan} from '../helpers/spawn.js'
import {fixtureVocab, header} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-memory-promise-'))
const native = loadNative()

describe.skipIf(!native.available)(`the memory plan holds (native backend${native.available ? '' : `: ${native.error}`})`, () => {
  it('small at 512 tokens, SPAN_MEMORY_AVAILABLE 2G: the pool is planned and the peak RSS stays under the plan', () => {
    // blocks that fill every row: 512 tokens of random ids between [CLS] and [SEP]
    const {cls, sep} = fixtureVocab.special
    const rows = Array.from({length: 8}, (_, d) =>
      JSON.stringify({doc: d, ids: [cls, ...Array.from({length: 510}, (_, i) => 5 + ((d * 7919 + i * 104729) % 6000)), sep]}),
    )
    writeFileSync(join(tmp, 'blocks.ndjson'), [header('blocks'), ...rows].join('\n') + '\n')
    const env = {...process.env, SPAN_MEMORY_AVAILABLE: '2G'}
    const r = runSpan(
      ['pretrain', 'blocks.ndjson', '--preset', 'small', '--batch-size', '1', '--max-steps', '3', '--warmup', '1', '--backend', 'native', '--out', 'run'],
      {
        cwd: tmp,
        env,
        timeout: 600_000,
      },
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/memory plan \(fp32, backend native\): .*; native buffer pool \S+ (KiB|MiB|GiB); about/)
    const m = /peak resident memory ([\d.]+) (MiB|GiB) \(the memory plan said about ([\d.]+) (MiB|GiB)\)/.exec(r.stderr)
    expect(m, r.stderr).not.toBeNull()
    const mib = (v: string, u: string) => Number(v) * (u === 'GiB' ? 1024 : 1)
    const [peak, plan] = [mib(m![1], m![2]), mib(m![3], m![4])]
    expect(peak, `peak ${peak} MiB, plan ${plan} MiB`).toBeLessThanOrEqual(plan)
  }, 600_000)
})
