// span pretrain's tagged schemes (issue 33): --tagged-prob, --tag-labels and --fill resolved, checked, fixed
// on resume, and handed to the dynamic masker of blocks exactly as span mask hands them to its own.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {DEFAULTS, resolveConfig, resolvePretrainRun, TRAIN_CONFIG_FILE} from '../../../src/core/train/config.js'
import {ExampleMaker} from '../../../src/core/train/examples.js'
import {STREAM} from '../../../src/core/train/sampler.js'
import {freshModelConfig, maskOptions, prepareData} from '../../../src/core/train/setup.js'
import {writeBlocks} from './helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-pretrain-tagged-'))
const blocks = join(tmp, 'blocks.ndjson')
const tiny = {preset: 'tiny', layers: 1, hidden: 16, heads: 2, 'batch-size': 2, backend: 'wasm', seed: 5, input: blocks}

beforeAll(async () => {
  await initBackend('wasm')
  writeBlocks(blocks, 30, 7)
  const [h, ...recs] = readFileSync(blocks, 'utf8').trimEnd().split('\n')
  // every block (≥ 14 ids) gets a PER, an ORG and an NP tag; inclusive token offsets (docs/formats.md#tags)
  const tagged = recs.map((l) =>
    JSON.stringify({
      ...JSON.parse(l),
      tags: [
        [1, 2, 'PER'],
        [4, 4, 'ORG'],
        [6, 8, 'NP'],
      ],
    }),
  )
  writeFileSync(blocks, [h, ...tagged].join('\n') + '\n')
})

/** Masks every block once through the run's own masker; its coin counts, and the masked positions. */
async function maskAll(values: Record<string, unknown>) {
  const config = resolveConfig([{name: 'flags', values: {...tiny, ...values}}])
  const data = await prepareData(config, (v) => freshModelConfig(config, v.tokens.length, v.special.pad), null)
  const masker = data.maskerFor('blocks')!
  const maker = new ExampleMaker(data.rules, masker, 9, STREAM.mask, data.index.name)
  const masked: number[][] = []
  for (let i = 0; i < data.index.size; i++) masked.push(maker.make(data.index.read(i), i, 0).targets.map(([p]) => p))
  await data.index.close()
  return {draws: {...masker.draws}, masked, opts: masker.opts}
}

describe('span pretrain --scheme entity | noun-phrase', () => {
  it("has span mask's defaults and hands the options to the masker (tag-labels as a list)", () => {
    expect([DEFAULTS['tagged-prob'], DEFAULTS['tag-labels'], DEFAULTS.fill]).toEqual([0.5, null, 'span'])
    const c = resolveConfig([{name: 'flags', values: {scheme: 'entity', 'tagged-prob': 0.25, 'tag-labels': 'PER, ORG', fill: 'whole-word'}}])
    expect(maskOptions(c)).toEqual({scheme: 'entity', ratio: 0.15, p: 0.2, maxSpan: 10, taggedProb: 0.25, tagLabels: ['PER', 'ORG'], fill: 'whole-word'})
    expect(maskOptions(resolveConfig([]))).toEqual({scheme: 'span', ratio: 0.15, p: 0.2, maxSpan: 10})
  })

  it.each([
    [{'tagged-prob': 1.5}, /^--tagged-prob must be a number in \[0, 1\], got 1\.5$/],
    [{fill: 'words'}, /^--fill must be one of span, whole-word, got "words"$/],
    [{'tag-labels': ' , '}, /^--tag-labels must be a comma-separated list of tag labels, got " , "$/],
  ])("refuses %j as a usage error (exit 2); from a --config file, as that file's error", (values, re) => {
    expect(() => resolveConfig([{name: 'flags', values}])).toThrow(re)
    try {
      resolveConfig([{name: 'flags', values}])
    } catch (err) {
      expect((err as {exitCode?: number}).exitCode).toBe(2)
    }
    expect(() => resolveConfig([{name: 'c.json', values}])).toThrow(/^c\.json: setting "(tagged-prob|fill|tag-labels)" must be/)
  })

  it('a resumed run keeps them: another --tagged-prob is refused', () => {
    const saved = resolveConfig([{name: 'flags', values: {...tiny, scheme: 'entity', 'tagged-prob': 0.5, fill: 'whole-word'}}])
    writeFileSync(join(tmp, TRAIN_CONFIG_FILE), JSON.stringify(saved))
    expect(() => resolvePretrainRun(undefined, {'tagged-prob': 0.3, input: '-'}, tmp)).toThrow(
      /"tagged-prob" is 0\.3 but the run in .* has 0\.5; a resumed run keeps it/,
    )
    expect(resolvePretrainRun(undefined, {input: '-'}, tmp).config).toMatchObject({'tagged-prob': 0.5, fill: 'whole-word', 'tag-labels': null})
  })

  it('the coin follows --tagged-prob; --tag-labels picks the tags; the budget stays ceil(0.15·n)', async () => {
    const never = await maskAll({scheme: 'entity', 'tagged-prob': 0})
    expect(never.draws.tagged).toBe(0)
    const always = await maskAll({scheme: 'entity', 'tagged-prob': 1, 'tag-labels': 'PER'})
    expect(always.draws.random).toBe(0) // while a PER tag is left, every draw takes it; then the rest is random
    for (const m of always.masked) expect(m).toEqual(expect.arrayContaining([1, 2])) // the PER tag, whole
    const np = await maskAll({scheme: 'noun-phrase', 'tagged-prob': 1})
    for (const m of np.masked) expect(m).toEqual(expect.arrayContaining([6, 7]))
    const half = await maskAll({scheme: 'entity', 'tagged-prob': 0.5})
    expect(half.draws.tagged).toBeGreaterThan(0)
    expect(half.draws.random).toBeGreaterThan(0)
    const lens = readFileSync(blocks, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l).ids.length - 2)
    half.masked.forEach((m, i) => expect(m.length).toBe(Math.ceil(0.15 * lens[i] - 1e-9)))
  })
})
