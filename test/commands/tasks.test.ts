// The issue-15 commands as spawned processes (build first: npm run build): eval tacred|ner|mrqa|nli|swag
// against the official scripts' goldens, bad input as one stderr line with source:line, and a
// finetune → predict → eval round for tacred and ner with a tiny model.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {gzipSync} from 'node:zlib'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-tasks-'))
const golden = (p: string) => JSON.parse(readFileSync(join(ROOT, 'fixtures', p), 'utf8'))

function span(args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'run.js'), ...args], {cwd: dir, encoding: 'utf8', timeout: 300_000})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const file = (name: string, text: string | Buffer) => (writeFileSync(join(dir, name), text), join(dir, name))

describe('span eval against the official scorers', () => {
  it("eval ner prints conlleval's table byte for byte; --json has its numbers", () => {
    const c = golden('ner/golden-conlleval.json').cases.find((x: {name: string}) => x.name === 'random-1')
    const p = file('random-1.txt', c.input)
    const r = span(['eval', 'ner', '--pred', p])
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(c.stdout)
    const j = JSON.parse(span(['eval', 'ner', '--pred', p, '--json']).stdout)
    expect(j.f1.toFixed(2)).toBe(/FB1: +([\d.]+)/.exec(c.stdout)?.[1])
  })

  it("eval tacred prints the scorer's output; --json fractions; --negative-label", () => {
    for (const c of golden('tacred/golden-scorer.json').cases.filter((x: {name: string}) => ['no-positive-prediction', 'semeval-Other'].includes(x.name))) {
      const g = file(`${c.name}.gold`, c.gold.join('\n') + '\n')
      const p = file(`${c.name}.pred`, c.pred.join('\n') + '\n')
      const r = span(['eval', 'tacred', '--gold', g, '--pred', p, '--negative-label', c.negative])
      expect(r.stdout).toBe(c.stdout)
      expect(JSON.parse(span(['eval', 'tacred', '--gold', g, '--pred', p, '--negative-label', c.negative, '--json']).stdout)).toEqual({
        precision: c.precision,
        recall: c.recall,
        f1: c.f1,
      })
    }
  })

  it('eval mrqa --json prints what mrqa_official_eval.py prints; missing and extra ids are warnings', () => {
    const c = golden('mrqa/golden-eval.json').cases.find((x: {name: string}) => x.name === 'missing-and-extra-ids')
    const d = file('m.jsonl.gz', gzipSync(['{"header": {}}', ...c.data.map((x: unknown) => JSON.stringify(x))].join('\n') + '\n'))
    const r = span(['eval', 'mrqa', '--data', d, '--pred', file('m.json', JSON.stringify(c.predictions)), '--json'])
    expect(r.code).toBe(0)
    expect(c.stdout.endsWith(r.stdout)).toBe(true)
    expect(r.stderr).toMatch(/1 questions without a prediction|questions without a prediction/)
  })

  it('eval nli and eval swag: accuracy of one label per line', () => {
    const g = file(
      'n.jsonl',
      '{"premise":"a","hypothesis":"b","label":"neutral"}\n{"sentence1":"a","sentence2":"c","gold_label":"-"}\n{"premise":"a","hypothesis":"d","label":"entailment"}\n',
    )
    expect(JSON.parse(span(['eval', 'nli', '--gold', g, '--pred', file('n.pred', 'neutral\ncontradiction\n'), '--json']).stdout)).toEqual({
      accuracy: 0.5,
      correct: 1,
      total: 2,
    })
    const s = join(ROOT, 'fixtures', 'swag', 'handmade-dev.csv')
    const labels = readFileSync(s, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',').pop())
    expect(JSON.parse(span(['eval', 'swag', '--gold', s, '--pred', file('s.pred', labels.join('\n') + '\n'), '--json']).stdout).accuracy).toBe(1)
  })
})

describe('bad input: one line naming source:line, exit 1', () => {
  it.each([
    [
      'eval tacred, a count mismatch',
      () => ['eval', 'tacred', '--gold', file('g1', 'a\nb\n'), '--pred', file('p1', 'a\n')],
      /^span eval tacred: .*p1: 1 predictions for 2 gold examples/,
    ],
    [
      'eval nli, an unknown predicted label',
      () => ['eval', 'nli', '--gold', file('g2.jsonl', '{"premise":"a","hypothesis":"b","label":"neutral"}\n'), '--pred', file('p2', 'maybe\n')],
      /^span eval nli: .*p2:1: unknown label "maybe"/,
    ],
    [
      'finetune tacred, a span out of range',
      () => [
        'finetune',
        'tacred',
        '--preset',
        'tiny',
        '--train',
        file('bad.jsonl', '{"token":["a","b"],"subj_start":0,"subj_end":0,"obj_start":1,"obj_end":5,"relation":"x"}\n'),
        '--out',
        join(dir, 'never'),
      ],
      /^span finetune tacred: .*bad\.jsonl:1: span obj_start\.\.obj_end = 1\.\.5 is out of range/,
    ],
    [
      'finetune ner, a bad tag',
      () => ['finetune', 'ner', '--preset', 'tiny', '--train', file('bad.conll', 'EU I-ORG\nx Y-ORG\n'), '--out', join(dir, 'never')],
      /^span finetune ner: .*bad\.conll:2: not an IOB tag/,
    ],
  ])('%s', (_, args, re) => {
    const r = span(args())
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(re)
    expect(existsSync(join(dir, 'never'))).toBe(false)
  })
})

describe('finetune → predict → eval with a tiny model', () => {
  it('tacred: the predicted labels file scores as the dev record said; a pipe into eval agrees', () => {
    const rows = Array.from({length: 8}, (_, i) =>
      JSON.stringify({
        token: ['Bill', 'works', 'for', 'Acme', 'in', 'Paris'],
        subj_start: 0,
        subj_end: 0,
        obj_start: i % 2 ? 3 : 5,
        obj_end: i % 2 ? 3 : 5,
        subj_type: 'PERSON',
        obj_type: i % 2 ? 'ORGANIZATION' : 'CITY',
        relation: i % 2 ? 'per:employee_of' : 'no_relation',
      }),
    )
    const d = file('re.jsonl', rows.join('\n') + '\n')
    const ft = span([
      'finetune',
      'tacred',
      '--preset',
      'tiny',
      '--train',
      d,
      '--dev',
      d,
      '--epochs',
      '1',
      '--batch-size',
      '4',
      '--max-len',
      '16',
      '--out',
      join(dir, 're'),
      '--threads',
      '1',
    ])
    expect(ft.code).toBe(0)
    const dev = ft.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((x) => x.split === 'dev')
    expect(JSON.parse(readFileSync(join(dir, 're', 'best', 'finetune_config.json'), 'utf8')).markers).toEqual([
      '[SUBJ-PERSON]',
      '[OBJ-CITY]',
      '[OBJ-ORGANIZATION]',
    ])
    const pr = span(['predict', 'tacred', '--model', join(dir, 're'), '--data', d, '-o', join(dir, 're.labels'), '--threads', '1'])
    expect(pr.code).toBe(0)
    expect(readFileSync(join(dir, 're.labels'), 'utf8').trim().split('\n')).toHaveLength(8)
    const ev = JSON.parse(span(['eval', 'tacred', '--gold', d, '--pred', join(dir, 're.labels'), '--json']).stdout)
    expect(ev.f1).toBeCloseTo(dev.f1, 12)
    const bin = `${process.execPath} ${join(ROOT, 'bin', 'run.js')}`
    const piped = spawnSync(
      'bash',
      [
        '-c',
        `set -o pipefail; ${bin} predict tacred --model ${join(dir, 're')} --data ${d} --threads 1 | ${bin} eval tacred --gold ${d} --pred /dev/stdin --json`,
      ],
      {encoding: 'utf8'},
    )
    expect(piped.status).toBe(0)
    expect(JSON.parse(piped.stdout)).toEqual(ev)
  })

  it('ner: predict writes the input lines with a tag appended, which eval ner reads beside the gold file', () => {
    const g = file('ner.conll', '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\n\nPeter NNP I-NP I-PER\n')
    expect(
      span(['finetune', 'ner', '--preset', 'tiny', '--train', g, '--dev', g, '--epochs', '1', '--max-len', '16', '--out', join(dir, 'ner'), '--threads', '1'])
        .code,
    ).toBe(0)
    expect(readdirSync(join(dir, 'ner', 'best'))).toContain('model.safetensors')
    const pr = span(['predict', 'ner', '--model', join(dir, 'ner'), '--data', g, '--threads', '1'])
    expect(pr.code).toBe(0)
    const lines = pr.stdout.split('\n')
    expect(lines[0]).toMatch(/^-DOCSTART- -X- O O \S+$/)
    expect(lines[2]).toMatch(/^EU NNP I-NP I-ORG [IBO]/)
    const ev = span(['eval', 'ner', '--gold', g, '--pred', file('ner.pred', pr.stdout)])
    expect(ev.code).toBe(0)
    expect(ev.stdout).toMatch(/^processed 5 tokens with 3 phrases;/)
  })

  it('ner and nli resumed with --keep 1: best/ still gets vocab.txt after the resumed checkpoint is rotated away', () => {
    const g = file(
      'r.conll',
      '-DOCSTART- -X- O O\n\n' + Array.from({length: 6}, (_, i) => `EU NNP I-NP I-ORG\nrejects VBZ I-VP O\nPeter${i} NNP I-NP I-PER\n`).join('\n'),
    )
    const n = file(
      'r.jsonl',
      Array.from({length: 6}, (_, i) => `{"premise":"a b ${i}","hypothesis":"c","label":"${['neutral', 'entailment', 'contradiction'][i % 3]}"}\n`).join(''),
    )
    for (const [task, data] of [
      ['ner', g],
      ['nli', n],
    ]) {
      const cmd = [
        'finetune',
        task,
        '--preset',
        'tiny',
        '--train',
        data,
        '--epochs',
        '2',
        '--batch-size',
        '2',
        '--max-len',
        '16',
        '--threads',
        '1',
        '--out',
        join(dir, `${task}-r`),
      ]
      expect(span([...cmd, '--stop-at', '1']).code).toBe(0)
      const r = span([...cmd, '--resume', join(dir, `${task}-r`)]) // best/ at steps 3 and 6, checkpoint-1/ gone after step 3
      expect(r.code, r.stderr).toBe(0)
      expect(readdirSync(join(dir, `${task}-r`)).sort()).toEqual(['best', 'checkpoint-6', 'span-run.json'])
      expect(readFileSync(join(dir, `${task}-r`, 'best', 'vocab.txt'), 'utf8')).toBe(readFileSync(join(dir, `${task}-r`, 'checkpoint-6', 'vocab.txt'), 'utf8'))
    }
  })
})
