// `span finetune --init RUN_DIR` where RUN_DIR is a `span pretrain` run without --eval (no
// best/): the newest checkpoint-STEP/ is used, with one note on stderr. Spawned (dist/ built).
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {BIN, ROOT, runShell, runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-init-run-'))
const span = `${process.execPath} ${BIN}`

describe('finetune --init of a pretrain run directory without best/', () => {
  it('takes its newest checkpoint-STEP/ and says so; an empty directory is still refused', () => {
    const corpus = join(ROOT, 'fixtures', 'corpus.txt')
    const pre = runShell(
      `${span} tokenize ${corpus} | head -200 | ${span} block --len 32 | ${span} mask --seed 1 | ` +
        `${span} pretrain --preset tiny --layers 1 --hidden 16 --heads 2 --max-steps 3 --save-every 2 --keep 2 --batch-size 4 --threads 1 --out pre > /dev/null`,
      {cwd: dir, timeout: 120_000},
    )
    expect(pre.code).toBe(0)
    expect(existsSync(join(dir, 'pre', 'best'))).toBe(false)
    expect(existsSync(join(dir, 'pre', 'checkpoint-3', 'config.json'))).toBe(true)
    const data = join(dir, 'n.jsonl')
    writeFileSync(data, ['neutral', 'entailment'].map((label, i) => JSON.stringify({premise: `the cat ${i}`, hypothesis: 'a dog', label})).join('\n') + '\n')
    const args = ['finetune', 'nli', '--train', data, '--epochs', '1', '--max-len', '16', '--threads', '1']
    const ft = runSpan([...args, '--init', join(dir, 'pre'), '--out', join(dir, 'ft')], {cwd: dir, timeout: 120_000})
    expect(ft.code).toBe(0)
    const note = `span finetune nli: ${join(dir, 'pre')} has no best/ (a run without dev scoring); using its newest checkpoint, ${join(dir, 'pre', 'checkpoint-3')}\n`
    expect(ft.stderr.startsWith(note)).toBe(true)
    expect(existsSync(join(dir, 'ft', 'best', 'model.safetensors'))).toBe(true)
    const empty = runSpan([...args, '--init', join(dir, 'ft', 'nothing'), '--out', join(dir, 'ft2')], {cwd: dir})
    expect([empty.code, empty.stderr]).toEqual([1, `span finetune nli: ${join(dir, 'ft', 'nothing')}: not a checkpoint directory (no config.json)\n`])
  })
})
