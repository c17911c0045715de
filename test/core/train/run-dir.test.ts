// modelDir: a checkpoint directory is itself; a run directory means its best/, else (a run
// without dev scoring, e.g. pretrain without --eval) its newest complete checkpoint-STEP/.
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {modelDir} from '../../../src/core/train/run-dir.js'

const ckpt = (dir: string) => (mkdirSync(dir, {recursive: true}), writeFileSync(join(dir, 'config.json'), '{}'))

describe('modelDir', () => {
  it('falls back to the newest checkpoint-STEP/ with a config.json (by step, not by name), and says so', () => {
    const run = mkdtempSync(join(tmpdir(), 'span-run-dir-'))
    ckpt(join(run, 'checkpoint-3'))
    ckpt(join(run, 'checkpoint-10'))
    mkdirSync(join(run, 'checkpoint-12')) // incomplete: no config.json
    const notes: string[] = []
    expect(modelDir(run, (l) => notes.push(l))).toBe(join(run, 'checkpoint-10'))
    expect(notes).toEqual([`${run} has no best/ (a run without dev scoring); using its newest checkpoint, ${join(run, 'checkpoint-10')}`])
  })

  it('prefers best/, takes a checkpoint directory as itself, and leaves anything else to the caller', () => {
    const run = mkdtempSync(join(tmpdir(), 'span-run-dir-'))
    ckpt(join(run, 'checkpoint-5'))
    ckpt(join(run, 'best'))
    const notes: string[] = []
    expect(modelDir(run, (l) => notes.push(l))).toBe(join(run, 'best'))
    expect(modelDir(join(run, 'checkpoint-5'), (l) => notes.push(l))).toBe(join(run, 'checkpoint-5'))
    expect(modelDir(join(run, 'missing'), (l) => notes.push(l))).toBe(join(run, 'missing'))
    expect(notes).toEqual([])
  })
})
