// `span pretrain --scheme entity|noun-phrase` with span mask's tagged settings (issue 33), as a user runs it
// (dist/ must be built): the settings in the resolved config on stderr and in every checkpoint's
// train_config.json; bad values refused in one line before anything is made.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-pretrain-tagged-'))
const blocks = join(tmp, 'blocks.ndjson')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--backend', 'wasm', '--seed', '4', '--lr', '1e-3']

beforeAll(() => {
  writeBlocks(blocks, 12, 3)
  const [h, ...recs] = readFileSync(blocks, 'utf8').trimEnd().split('\n')
  writeFileSync(
    blocks,
    [
      h,
      ...recs.map((l) =>
        JSON.stringify({
          ...JSON.parse(l),
          tags: [
            [1, 2, 'PER'],
            [5, 6, 'NP'],
          ],
        }),
      ),
    ].join('\n') + '\n',
  )
})

describe('span pretrain with the tagged schemes', () => {
  it('saves --tagged-prob, --tag-labels and --fill with the run and prints them in the resolved config', () => {
    const out = join(tmp, 'run')
    const args = ['pretrain', blocks, ...TINY, '--scheme', 'entity', '--tagged-prob', '0.3', '--tag-labels', 'PER', '--fill', 'whole-word']
    const r = runSpan([...args, '--max-steps', '2', '--objectives', 'mlm', '--out', out])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/"scheme":"entity".*"tagged-prob":0\.3,"tag-labels":"PER","fill":"whole-word"/)
    const saved = JSON.parse(readFileSync(join(out, 'checkpoint-2', 'train_config.json'), 'utf8'))
    expect(saved).toMatchObject({scheme: 'entity', 'tagged-prob': 0.3, 'tag-labels': 'PER', fill: 'whole-word'})
    const again = runSpan(['pretrain', '--resume', out, '--tagged-prob', '0.6', '--max-steps', '3'])
    expect([again.code, again.stdout]).toEqual([2, ''])
    expect(again.stderr).toMatch(/^span pretrain: flags: "tagged-prob" is 0\.6 but the run in .* has 0\.3; a resumed run keeps it\n$/)
  })

  it.each([
    [['--tagged-prob', '1.5'], /--tagged-prob/],
    [['--fill', 'words'], /--fill/],
    [['--tag-labels', ','], /^span pretrain: --tag-labels must be a comma-separated list of tag labels, got ","\n$/],
  ])('refuses %j: one line, exit 2, no run directory', (bad, re) => {
    const out = join(tmp, `never-${bad[0].slice(2)}`)
    const r = runSpan(['pretrain', blocks, ...TINY, '--scheme', 'noun-phrase', ...bad, '--max-steps', '1', '--out', out])
    expect([r.code, r.stdout]).toEqual([2, ''])
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(re)
    expect(existsSync(out)).toBe(false)
  })
})
