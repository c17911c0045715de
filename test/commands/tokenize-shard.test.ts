// `span tokenize --shard K/N` (issue 14): N processes split one corpus with no coordination;
// the shards' documents together are exactly the unsharded run's.
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const corpus = join(root, 'fixtures', 'corpus.txt')

function span(args: string[]) {
  const r = spawnSync('node', [bin, 'tokenize', ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 28})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

type Tok = {doc: number; ids: number[]}
const body = (stdout: string): Tok[] =>
  stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as Tok)

/** doc → its records' ids, in order. */
function documents(recs: Tok[]): Map<number, number[][]> {
  const m = new Map<number, number[][]>()
  for (const r of recs) m.set(r.doc, [...(m.get(r.doc) ?? []), r.ids])
  return m
}

describe('span tokenize --shard K/N', () => {
  it('keeps every N-th document from K; the shards concatenated hold the unsharded documents', () => {
    const all = span([corpus])
    expect(all.code).toBe(0)
    const whole = documents(body(all.stdout))
    expect(whole.size).toBeGreaterThan(3)
    const shards = [0, 1, 2].map((k) => span([corpus, '--shard', `${k}/3`]))
    for (const s of shards) expect(s.code, s.stderr).toBe(0)
    shards.forEach((s, k) => {
      expect(JSON.parse(s.stdout.split('\n')[0]).history.at(-1).flags.shard).toBe(`${k}/3`)
      for (const r of body(s.stdout)) expect(r.doc % 3).toBe(k)
    })
    const joined = documents(shards.flatMap((s) => body(s.stdout)))
    expect(joined.size).toBe(whole.size)
    expect(new Map([...joined].sort((a, b) => a[0] - b[0]))).toEqual(whole)
  })

  it('refuses a shard outside 0 ≤ K < N as a usage error', () => {
    for (const bad of ['3/3', '1/0', 'a/2', '-1/2']) {
      const r = span([corpus, '--shard', bad])
      expect(r.code, bad).toBe(2)
      expect(r.stderr.trim()).toBe(`span tokenize: --shard ${bad}: expected K/N with 0 ≤ K < N, e.g. 0/4`)
    }
  })
})
