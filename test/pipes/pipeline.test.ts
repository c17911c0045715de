// Real pipes: bin/run.js processes joined by a shell, as a user types them (`npm test` builds dist/ first).
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runShell} from '../helpers/spawn.js'

const root = join(__dirname, '..', '..')
const span = `node ${join(root, 'bin', 'run.js')}`
const corpus = join(root, 'fixtures', 'corpus.txt')

function sh(script: string, input = '') {
  return runShell(script, {input})
}

const lines = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l))

describe('tokenize | block | mask | inspect', () => {
  it('turns the embedded corpus into span-masked examples', () => {
    const r = sh(`${span} tokenize ${corpus} | ${span} block --len 128 | ${span} mask --seed 3 | ${span} inspect --json`)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const summary = JSON.parse(r.stdout)
    expect(summary.records).toBeGreaterThan(400)
    expect(summary.masking.maskRatio).toBeGreaterThan(0.15)
    expect(summary.masking.maskRatio).toBeLessThan(0.16) // ceil(0.15 n) per block
  })

  it('carries the header and its history through every stage', () => {
    const r = sh(`${span} tokenize ${corpus} | ${span} block --len 64 | ${span} mask --seed 1 | head -1`)
    expect(r.code).toBe(0)
    const [header] = lines(r.stdout)
    expect(header.span).toBe('header')
    expect(header.kind).toBe('masked')
    expect(header.history.map((h: {stage: string}) => h.stage)).toEqual(['tokenize', 'block', 'mask'])
    expect(header.special.mask).toBe(4)
  })

  it('is byte-identical for the same seed, and differs for another', () => {
    const run = (seed: number) => sh(`${span} tokenize ${corpus} | ${span} block --len 128 | ${span} mask --seed ${seed} | sha256sum`).stdout
    expect(run(5)).toBe(run(5))
    expect(run(5)).not.toBe(run(6))
  })
})

describe('closed pipes, empty input and bad lines', () => {
  it('| head -1 ends every stage quietly with exit 0', () => {
    const r = sh(`${span} tokenize ${corpus} | ${span} block --len 32 | ${span} mask | head -1 > /dev/null; echo "\${PIPESTATUS[@]}"`)
    expect(r.stderr).toBe('')
    expect(r.stdout.trim()).toBe('0 0 0 0')
  })

  it('empty input gives header-only streams and a zero summary', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'span-pipe-')), 'empty.ndjson')
    const r = sh(`${span} tokenize | ${span} block | ${span} mask | tee ${file} | ${span} inspect --json`, '')
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout).records).toBe(0)
    const out = readFileSync(file, 'utf8')
    expect(lines(out)).toHaveLength(1)
    expect(lines(out)[0].kind).toBe('masked')
  })

  it('a corrupted line between stages is reported with its line number', () => {
    const r = sh(`${span} tokenize ${corpus} | sed '5s/.*/{not json/' | ${span} block`)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^span block: stdin:5: invalid JSON/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('a stream from the wrong stage is refused', () => {
    const r = sh(`${span} tokenize ${corpus} | ${span} mask`)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('span mask: stdin:1: expected a stream of blocks (from span block), got tokens (from span tokenize)\n')
  })

  it('binary garbage is refused with its line', () => {
    const r = sh(`printf 'ok\\n\\x00\\x01\\x02\\n' | ${span} tokenize`)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^span tokenize: stdin:2: binary input/)
  })
})
