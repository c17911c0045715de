// Issue 25 cause 7: an empty TACRED list or a header-only SWAG file ended finetune with
// "RangeError: total steps must be an integer ≥ 1, got 0". An empty training set is the
// file's data error (exit 1, naming it), for every task, and --out is never made.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const root = join(import.meta.dirname, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-empty-train-'))
const swagHeader = readFileSync(join(root, 'fixtures', 'swag', 'handmade-train.csv'), 'utf8').split('\n')[0] + '\n'

const CASES: [string, string, string, string[]][] = [
  ['tacred', 'tacred.json', '[]\n', []],
  ['swag', 'swag.csv', swagHeader, []],
  ['glue', 'sst2.tsv', 'sentence\tlabel\n', ['--task', 'sst2']],
  ['ner', 'ner.txt', '', []],
  ['nli', 'nli.jsonl', '', []],
  ['squad', 'squad.json', '{"version": "v2.0", "data": []}\n', []],
  ['mrqa', 'mrqa.jsonl', '{"header": {"dataset": "x", "split": "train"}}\n', []],
]

describe('finetune on an empty training set (bin/run.js)', () => {
  it.each(CASES)('%s: one line naming %s, exit 1, no --out', (task, name, text, extra) => {
    const train = join(dir, name)
    writeFileSync(train, text)
    const out = join(dir, `out-${task}`)
    const r = runSpan(['finetune', task, '--train', train, '--preset', 'tiny', '--out', out, '--epochs', '1', ...extra], {timeout: 120_000})
    const last = r.stderr.trimEnd().split('\n').at(-1)
    expect(last).toMatch(new RegExp(`^span finetune ${task}: ${train.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (no|empty)`))
    expect(r.stderr).not.toMatch(/RangeError|total steps/)
    expect(r.code).toBe(1)
    expect(existsSync(out)).toBe(false)
  })
})
