// `span finetune coref` and `span predict coref` as a user runs them (dist/ must be built): a tiny
// model fine-tuned on synthetic LitBank- and OntoGUM-layout documents, predictions that keep every
// input column, `predict | eval coref` as a pipe, a stopped and resumed run that ends byte for byte
// where the uninterrupted one ends, and bad input in process through oclif (one line, exit 1 or 2).
import {runCommand} from '@oclif/test'
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {smallConfig} from '../core/model/helpers.js'
import {litbankDoc} from '../core/tasks/coref-helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {runShell, runSpan} from '../helpers/spawn.js'

const root = join(import.meta.dirname, '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-coref-'))
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name))
const ckpt = join(dir, 'pre')
const small = ['--max-segment-len', '12', '--max-training-segments', '2', '--ffnn-size', '8', '--feature-size', '4', '--max-span-width', '5']
const loop = ['--lr', '1e-3', '--task-lr', '1e-3', '--log-every', '1', '--threads', '1', '--backend', 'cpu']
const lit = () => file('lit.conll', litbankDoc('a', 3) + litbankDoc('b', 2))
/** OntoGUM's layout: one document, 3 columns, an empty name, no separator between brackets. */
const GUM = '# begin document \n0\tJohn\t(0)\n1\tsaw\t_\n2\tMary\t(1)\n3\t.\t_\n4\tHe\t(0)\n5\tliked\t_\n6\ther\t(1)\n7\t.\t_\n# end document\n'

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
})

afterEach(() => {
  process.exitCode = undefined
})

describe('span finetune coref → predict coref', () => {
  it('fine-tunes from a pretrain checkpoint; predict keeps every column and replaces the coreference one', () => {
    const g = lit()
    const out = join(dir, 'run')
    const r = runSpan(['finetune', 'coref', '--init', ckpt, '--train', g, '--dev', g, '--out', out, ...small, ...loop, '--epochs', '2', '--coref-depth', '2'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('singletons off')
    expect(readdirSync(join(out, 'best'))).toContain('model.safetensors')
    const dev = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((x) => x.split === 'dev')
    expect(dev).toHaveLength(2)
    const p = runSpan(['predict', 'coref', '--model', out, '--data', g, '--threads', '1'])
    expect(p.code, p.stderr).toBe(0)
    const strip = (t: string) => t.split('\n').map((l) => l.split('\t').slice(0, -1).join('\t'))
    expect(strip(p.stdout)).toEqual(strip(readFileSync(g, 'utf8'))) // every line and column but the last as read
    expect(p.stdout.match(/#begin document/g)).toHaveLength(2)
  })

  it('OntoGUM layout: 3 columns kept, the empty name given from the file name; a folder as --train', () => {
    const g = file('GUM_x.conll', GUM)
    mkdirSync(join(dir, 'gum-docs'))
    writeFileSync(join(dir, 'gum-docs', 'GUM_x.conll'), GUM)
    const out = join(dir, 'gum')
    const r = runSpan(['finetune', 'coref', '--preset', 'tiny', '--train', join(dir, 'gum-docs'), '--out', out, ...small, ...loop, '--epochs', '1'])
    expect(r.code, r.stderr).toBe(0) // a folder's data hash (it failed with EISDIR)
    const p = runSpan(['predict', 'coref', '--model', out, '--data', g, '--threads', '1', '--no-singletons'])
    expect(p.code, p.stderr).toBe(0)
    const lines = p.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('# begin document GUM_x')
    expect(lines.slice(1, -1).every((l, i) => l.startsWith(`${i}\t`) && l.split('\t').length === 3)).toBe(true)
  })

  it('--head s2e: saved in config.json, read back by predict coref', () => {
    const g = file('GUM_s2e.conll', GUM)
    const out = join(dir, 's2e')
    const r = runSpan(['finetune', 'coref', '--preset', 'tiny', '--head', 's2e', '--train', g, '--dev', g, '--out', out, ...small, ...loop, '--epochs', '1'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8')).coref.head_type).toBe('s2e')
    const p = runSpan(['predict', 'coref', '--model', out, '--data', g, '--threads', '1'])
    expect(p.code, p.stderr).toBe(0)
    expect(p.stdout.split('\n')[0]).toBe('# begin document GUM_s2e')
  })

  it('predict | eval coref --pred - as a pipe', () => {
    const g = lit()
    const predict = `node bin/run.js predict coref --model ${join(dir, 'run')} --data ${g} --threads 1`
    const r = runShell(`set -o pipefail; ${predict} | node bin/run.js eval coref --gold ${g} --pred - --json`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    const viaFile = runShell(`${predict} -o ${join(dir, 'pred.conll')} && node bin/run.js eval coref --gold ${g} --pred ${join(dir, 'pred.conll')} --json`)
    expect(viaFile.code, viaFile.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(viaFile.stdout)) // the pipe gives the file's scores
    expect(JSON.parse(r.stdout)).toMatchObject({documents: 2, missing_documents: 0})
  })

  it('a run stopped with --stop-at and resumed ends byte for byte where the uninterrupted run ends', () => {
    const g = lit()
    const args = (out: string) => [
      'finetune',
      'coref',
      '--init',
      ckpt,
      '--train',
      g,
      '--dev',
      g,
      '--out',
      out,
      ...small,
      ...loop,
      '--epochs',
      '2',
      '--eval-every',
      '3',
    ]
    expect(runSpan(args(join(dir, 'whole'))).code).toBe(0)
    const first = runSpan([...args(join(dir, 'part')), '--stop-at', '2'])
    expect(first.code, first.stderr).toBe(0)
    // step 2 ends the epoch: its evaluation wrote checkpoint-2, which --stop-at neither writes nor announces again
    expect(first.stdout.split('\n').filter((l) => l.includes('"checkpoint"'))).toEqual([
      JSON.stringify({step: 2, checkpoint: join(dir, 'part', 'checkpoint-2')}),
    ])
    const r = runSpan([...args(join(dir, 'part')), '--resume', join(dir, 'part')])
    expect(r.code, r.stderr).toBe(0)
    for (const f of ['model.safetensors', 'optimizer.safetensors'])
      expect(readFileSync(join(dir, 'part', 'checkpoint-4', f)).equals(readFileSync(join(dir, 'whole', 'checkpoint-4', f))), f).toBe(true)
    expect(readFileSync(join(dir, 'part', 'best', 'model.safetensors')).equals(readFileSync(join(dir, 'whole', 'best', 'model.safetensors')))).toBe(true)
  })

  it('a head flag typed on --resume must agree with the saved head: else one line, exit 2, nothing written', () => {
    const g = lit()
    const out = join(dir, 'head-resume')
    expect(runSpan(['finetune', 'coref', '--init', ckpt, '--train', g, '--out', out, ...small, ...loop, '--epochs', '2', '--stop-at', '1']).code).toBe(0)
    const before = readdirSync(out).sort()
    for (const [flag, value, was] of [
      ['--head', 's2e', '"joshi"'],
      ['--ffnn-size', '9', '8'],
      ['--coref-depth', '2', '1'],
      ['--mention-loss', 'all', '"none"'],
    ]) {
      const r = runSpan(['finetune', 'coref', '--resume', out, flag, value, '--stop-at', '2'])
      expect([r.code, r.stderr.trim().split('\n').length], r.stderr).toEqual([2, 1])
      expect(r.stderr).toContain(`${flag} ${flag === '--head' || flag === '--mention-loss' ? `"${value}"` : value} differs from the run in ${out} (${was})`)
    }
    expect(readdirSync(out).sort()).toEqual(before)
    const same = runSpan(['finetune', 'coref', '--resume', out, '--head', 'joshi', '--ffnn-size', '8', '--stop-at', '2'])
    expect(same.code, same.stderr).toBe(0) // typed again with the saved values: the run goes on
    expect(readdirSync(out)).toContain('checkpoint-2')
  })
})

describe('bad input, in process', () => {
  const cases: [string, string[], RegExp, number][] = [
    ['a closing bracket with no opening', ['finetune', 'coref', '--preset', 'tiny', '--train', '@bad1', '--out', join(dir, 'never')], /bad1\.conll:2: /, 1],
    ['a mention left open', ['finetune', 'coref', '--preset', 'tiny', '--train', '@bad2', '--out', join(dir, 'never2')], /bad2\.conll:\d+: /, 1],
    [
      'segments longer than the checkpoint',
      ['finetune', 'coref', '--init', ckpt, '--train', '@ok', '--out', join(dir, 'never3'), '--max-segment-len', '64'],
      /exceeds/,
      2,
    ],
    ['predict with a model of another task', ['predict', 'coref', '--model', ckpt, '--data', '@ok'], /not a span finetune coref model/, 1],
  ]
  it.each(cases)('%s: one line on stderr, its exit code', async (_name, argv, want, code) => {
    const files: Record<string, string> = {
      '@bad1': file('bad1.conll', '#begin document (x); part 0\nx\t0\t0\tA\t_\t_\t_\t_\t_\t_\t_\t_\t0)\n#end document\n'),
      '@bad2': file('bad2.conll', '#begin document (x); part 0\nx\t0\t0\tA\t_\t_\t_\t_\t_\t_\t_\t_\t(0\n#end document\n'),
      '@ok': lit(),
    }
    const r = await runCommand(
      argv.map((a) => files[a] ?? a),
      {root},
    )
    const lines = r.stderr.trim().split('\n')
    expect(lines.at(-1), r.stderr).toMatch(want)
    expect(process.exitCode ?? r.error?.oclif?.exit).toBe(code)
  })
})
