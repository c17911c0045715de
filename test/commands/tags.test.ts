// Tags through the data stages as a user runs them (dist/ must be built): block carries them, mask
// reads them (--scheme entity | noun-phrase), inspect summarises them; bad tags are one line, exit 1.
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {maskBudget} from '../../src/core/data/mask.js'
import {fakeTags} from '../core/data/fake-tags.js'
import {describeData, vocab, wikiRecords} from '../core/data/helpers.js'
import {runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-tags-'))
const tokens = join(dir, 'tokens.ndjson')
const blocks = join(dir, 'blocks.ndjson')
const parse = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
const header = (kind: string) =>
  JSON.stringify({span: 'header', kind, vocab: vocab.info, cased: true, special: vocab.special, history: [{stage: 'tokenize', version: '0.1.0', flags: {}}]})

beforeAll(() => {
  const recs = wikiRecords().slice(0, 600)
  const lines = recs.map((r) => JSON.stringify({...r, tags: fakeTags([vocab.special.cls, ...r.ids, vocab.special.sep]).map(([s, e, l]) => [s - 1, e - 1, l])}))
  writeFileSync(tokens, [header('tokens'), ...lines].join('\n') + '\n')
  const r = runSpan(['block', '--len', '128', tokens])
  expect(r.code).toBe(0)
  writeFileSync(blocks, r.stdout)
})

describeData('tags in the stream', () => {
  it('span block carries the tags re-based to the block, and says how many a block edge cut', () => {
    const recs = parse(runSpan(['block', '--len', '128', tokens]).stdout).slice(1)
    const tagged = recs.filter((b) => b.tags)
    expect(tagged.length).toBeGreaterThan(recs.length / 2)
    for (const b of tagged) for (const [s, e] of b.tags) expect(s >= 1 && e <= b.ids.length - 2 && s <= e).toBe(true)
    const short = runSpan(['block', '--len', '16', tokens]) // long lines are cut into pieces of 14
    expect(short.code).toBe(0)
    expect(short.stderr).toMatch(/^span block: \d+ tags dropped \(cut by a block edge\), \d+ kept\n$/)
  })

  it('span mask --scheme entity: exact budget, fourth element the label or "random", the draws on stderr, flags in the header', () => {
    const r = runSpan(['mask', '--scheme', 'entity', '--tagged-prob', '0.5', '--seed', '4', blocks])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/^span mask: \d+ tagged and \d+ random draws \(tagged share 0\.\d+\) while tags were left\n$/)
    const [h, ...out] = parse(r.stdout)
    expect(h.history.at(-1).flags).toMatchObject({scheme: 'entity', taggedProb: 0.5, fill: 'span', tagLabels: null})
    const input = parse(runSpan(['block', '--len', '128', tokens]).stdout).slice(1)
    const origins = new Set<string>()
    out.forEach((rec, i) => {
      expect(rec.targets.length).toBe(maskBudget(input[i].ids.length - 2, 0.15))
      for (const s of rec.spans) origins.add(s[3])
    })
    expect([...origins].sort()).toEqual(['ENT', 'random'])
    expect(runSpan(['mask', '--scheme', 'entity', '--tagged-prob', '0.5', '--seed', '4', blocks]).stdout).toBe(r.stdout)
    const insp = JSON.parse(runSpan(['inspect', '--json'], {input: r.stdout}).stdout)
    expect(insp.masking.origins.taggedShare.spans).toBeGreaterThan(0.2)
    expect(Object.keys(insp.masking.origins.byOrigin).sort()).toEqual(['ENT', 'random'])
  })

  it('span mask --scheme noun-phrase takes NP tags; with none it says so and masks random spans', () => {
    const np = runSpan(['mask', '--scheme', 'noun-phrase', blocks])
    expect(
      new Set(
        parse(np.stdout)
          .slice(1)
          .flatMap((r) => r.spans.map((s: unknown[]) => s[3])),
      ),
    ).toEqual(new Set(['NP', 'random']))
    const none = runSpan(['mask', '--scheme', 'noun-phrase', '--tag-labels', 'PER', blocks])
    expect(none.code).toBe(0)
    expect(none.stderr).toContain('no block had a tag that --scheme noun-phrase takes (see --tag-labels): every span is random')
  })

  it('span inspect summarises tags: per block, by label, lengths beside the geometric law', () => {
    const s = JSON.parse(runSpan(['inspect', '--json', blocks]).stdout)
    expect(s.tags.tags).toBeGreaterThan(100)
    expect(Object.keys(s.tags.byLabel).sort()).toEqual(['ENT', 'NP'])
    expect(s.tags.length.rows.length).toBe(11)
    expect(s.tags.length.geometricMean).toBeCloseTo(3.8, 1)
  })

  for (const [what, tags, msg] of [
    [
      'overlapping',
      [
        [0, 2, 'A'],
        [2, 3, 'B'],
      ],
      'tags[1] [2, 3] overlaps tags[0] [0, 2]',
    ],
    ['past the record', [[1, 9, 'A']], 'tags[0][1] = 9 is past the record (5 ids; ends are inclusive)'],
    ['non-integer', [[0.5, 1, 'A']], 'tags[0][0] = 0.5 is not a position (an integer ≥ 0)'],
  ] as const) {
    it(`${what} tags: one line naming source:line, exit 1, nothing written (block and mask)`, () => {
      const tok = [header('tokens'), JSON.stringify({doc: 0, ids: [5, 6, 7]}), JSON.stringify({doc: 0, ids: [1000, 1001, 1002, 1003, 1004], tags})]
      const b = runSpan(['block'], {input: tok.join('\n') + '\n'})
      expect([b.code, b.stdout, b.stderr]).toEqual([1, '', `span block: stdin:3: ${msg}\n`])
      const {cls, sep} = vocab.special
      const blk = [header('blocks'), JSON.stringify({doc: 0, ids: [cls, 1000, 1001, 1002, sep], tags})].join('\n') + '\n'
      const m = runSpan(['mask', '--scheme', 'entity'], {input: blk})
      expect([m.code, m.stdout, m.stderr]).toEqual([1, '', `span mask: stdin:2: ${msg}\n`])
    })
  }
})
