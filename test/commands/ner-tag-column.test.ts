// finetune ner and eval ner's --tag-column/--tag-types in-process through oclif (issue 33): flag parsing,
// dispatch and the one-line errors, stdout and stderr apart. The trained chunker as processes: test/pipes/tag-chunker.test.ts.
import {runCommand} from '@oclif/test'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

const root = join(__dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'span-ner-column-'))
const run = (args: string[]) => runCommand(args, {root})
const file = (name: string, text: string) => (writeFileSync(join(tmp, name), text), join(tmp, name))

// token POS chunk NER; chunks [EU] [German call] [he], a VP and a PP the NP chunker reads as O
const GOLD = '-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\nto TO I-PP O\nhe PRP I-NP O\n'

afterEach(() => {
  process.exitCode = undefined
})

describe('--tag-column through oclif', () => {
  it('eval ner --tag-column chunk --tag-types NP scores NP chunks of the gold file against token PRED lines', async () => {
    const pred = file('p.txt', 'EU I-NP\nrejects O\nGerman I-NP\ncall O\nto O\nhe I-NP\n') // [German] for [German call]: 2 of 3
    const {stdout, stderr, error} = await run([
      'eval',
      'ner',
      '--gold',
      file('g.conll', GOLD),
      '--pred',
      pred,
      '--tag-column',
      'chunk',
      '--tag-types',
      'NP',
      '--json',
    ])
    expect([error, stderr]).toEqual([undefined, ''])
    const s = JSON.parse(stdout)
    expect([s.precision, s.recall, s.phrases, s.found, s.correct]).toEqual([(100 * 2) / 3, (100 * 2) / 3, 3, 3, 2])
    expect(Object.keys(s.per_type)).toEqual(['NP'])
    const ner = JSON.parse((await run(['eval', 'ner', '--gold', join(tmp, 'g.conll'), '--pred', pred, '--json'])).stdout) // the NER column: other chunks
    expect(ner.phrases).toBe(2)
  })

  it.each([
    [
      ['--tag-column', 'chunks'],
      2,
      /^span finetune ner: --tag-column must be ner, chunk, pos, last or a column number from 2 \(1 is the token\), got "chunks"\n$/,
    ],
    [['--tag-column', '7'], 1, /^span finetune ner: .*g\.conll:3: no column 7 \(--tag-column\): the line has 4 columns\n$/],
    [['--tag-column', 'chunk', '--tag-types', 'NP,ADJP'], 1, /^span finetune ner: .*g\.conll: no ADJP tags in column 3 \(chunk\) \(--tag-types NP,ADJP\)\n$/],
    [['--tag-types', 'B-NP'], 2, /^span finetune ner: --tag-types must be comma-separated chunk types such as NP or PER,LOC, got "B-NP"\n$/],
  ])('finetune ner %j: one line, exit %i, no run directory', async (flags, code, re) => {
    const out = join(tmp, `never-${flags.join('')}`)
    const {stdout, stderr} = await run(['finetune', 'ner', '--preset', 'tiny', '--train', file('g.conll', GOLD), ...flags, '--backend', 'wasm', '--out', out])
    expect(stdout).toBe('')
    expect(stderr).toMatch(re)
    expect(process.exitCode).toBe(code)
    expect(existsSync(out)).toBe(false)
  })
})
