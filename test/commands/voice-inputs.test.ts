// Issue 25 causes 8, 9 and 10 through bin/run.js: bad input refused (never exit 0), exit codes by
// one rule (a flag's value wrong on its own or with other flags: 2; a file's content or the
// filesystem: 1), and library wording (V8's JSON.parse, Node's ENOSPC) said in span's voice.
import {copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {type Run, runShell, runSpan} from '../helpers/spawn.js'

const root = join(import.meta.dirname, '..', '..')
const fixture = join(root, 'fixtures', 'torch', 'legacy-f32') // a 2-layer BERT of 100 tokens, with vocab.txt
const dir = mkdtempSync(join(tmpdir(), 'span-voice-inputs-'))
const at = (...p: string[]) => join(dir, ...p)
const span = (args: string[], input = ''): Run => runSpan(args, {input, cwd: dir, timeout: 120_000})

/** One line on stderr matching `re`, and the exit code. */
function oneLine(r: Run, code: number, re: RegExp): void {
  expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(re)
  expect(r.stderr).not.toMatch(/RangeError|TypeError|SyntaxError|Error:|›/)
  expect(r.code, r.stderr).toBe(code)
}

beforeAll(() => {
  writeFileSync(at('text.txt'), 'the cat sat on the mat\n')
  // masked examples of the fixture vocabulary, with a header (tokenize | block | mask)
  const made = runShell(
    `node bin/run.js tokenize --vocab ${fixture}/vocab.txt fixtures/corpus.txt | node bin/run.js block --len 24 | node bin/run.js mask --seed 1 > ${at('masked.ndjson')}`,
  )
  expect(made.code, made.stderr).toBe(0)
})

describe('cause 8: bad input is refused, never trained on or written (exit 1 unless a flag)', () => {
  it('masked records whose targets and spans disagree: inspect and pretrain name source:line', () => {
    const lines = readFileSync(at('masked.ndjson'), 'utf8').trimEnd().split('\n')
    const rec = JSON.parse(lines[2]) as {targets: [number, number][]}
    rec.targets = rec.targets.slice(1) // a span position that is no longer a target
    lines[2] = JSON.stringify(rec)
    writeFileSync(at('disagree.ndjson'), lines.join('\n') + '\n')
    oneLine(span(['inspect', 'disagree.ndjson']), 1, /^span inspect: disagree\.ndjson:3: .*targets and spans disagree$/)
    const r = span(['pretrain', 'disagree.ndjson', '--preset', 'tiny', '--max-steps', '1', '--batch-size', '2', '--out', 'pt-disagree'])
    oneLine(r, 1, /^span pretrain: disagree\.ndjson:3: .*targets and spans disagree$/)
  })

  it('"doc": -1 is refused at its line', () => {
    writeFileSync(at('neg-doc.ndjson'), '{"doc": -1, "ids": [5, 6]}\n')
    oneLine(span(['inspect', 'neg-doc.ndjson']), 1, /^span inspect: neg-doc\.ndjson:1: field "doc" must be an integer ≥ 0, got -1$/)
  })

  it('a vocabulary without [CLS] is not exported', () => {
    cpSync(fixture, at('no-cls'), {recursive: true})
    const vocab = readFileSync(at('no-cls', 'vocab.txt'), 'utf8').replace('[CLS]\n', '[unused0]\n')
    writeFileSync(at('no-cls', 'vocab.txt'), vocab)
    const r = span(['export', '--model', 'no-cls', '--to', 'no-cls-out', '--format', 'safetensors'])
    oneLine(r, 1, /no-cls\/vocab\.txt: not a BERT vocabulary \(no \[CLS\] token\)$/)
    expect(existsSync(at('no-cls-out'))).toBe(false)
  })

  it('NaN weights are refused by tensor name, never encoded to nulls', () => {
    expect(span(['export', '--model', fixture, '--to', 'nan', '--format', 'safetensors']).code).toBe(0)
    const buf = readFileSync(at('nan', 'model.safetensors'))
    const n = Number(buf.readBigUInt64LE(0))
    const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, {dtype: string; data_offsets: [number, number]}>
    const [name, t] = Object.entries(header).find(([k, v]) => k !== '__metadata__' && v.dtype === 'F32')!
    for (let p = 8 + n + t.data_offsets[0]; p < 8 + n + t.data_offsets[1]; p += 4) buf.writeFloatLE(NaN, p)
    writeFileSync(at('nan', 'model.safetensors'), buf)
    const r = span(['encode', '--model', 'nan'], '{"doc": 0, "ids": [2, 5, 3]}\n')
    expect(r.stdout).toBe('')
    oneLine(r, 1, new RegExp(`"${name.replace(/[.]/g, '\\.')}" holds \\d+ of \\d+ values that are NaN or infinite`))
  })

  it('predict glue --task RTE with an SST-2 model is refused', () => {
    writeFileSync(at('sst.tsv'), 'sentence\tlabel\nit is good\t1\nit is bad\t0\n')
    writeFileSync(at('rte.tsv'), 'index\tsentence1\tsentence2\tlabel\n0\tA cat sat.\tA cat sits.\tentailment\n')
    const ft = span([
      'finetune',
      'glue',
      '--task',
      'sst2',
      '--train',
      'sst.tsv',
      '--init',
      fixture,
      '--out',
      'sst-run',
      '--epochs',
      '1',
      '--batch-size',
      '2',
      '--max-len',
      '32',
    ])
    expect(ft.code, ft.stderr).toBe(0)
    const r = span(['predict', 'glue', '--model', 'sst-run', '--task', 'rte', '--data', 'rte.tsv'])
    expect(r.stdout).toBe('')
    oneLine(r, 1, /was fine-tuned on SST-2, not RTE/)
  })

  it('flags that were accepted: --layers with an empty item, --beam below --k, --stop-at 0, --warmup-proportion 2 (exit 2)', () => {
    oneLine(span(['encode', '--model', fixture, '--layers=-1,,-2'], '{"doc": 0, "ids": [2, 5, 3]}\n'), 2, /--layers "-1,,-2": an empty item/)
    oneLine(span(['fill', '--model', fixture, '--k', '5', '--beam', '1'], 'a [MASK] b\n'), 2, /^span fill: --beam 1 is narrower than --k 5/)
    oneLine(span(['pretrain', 'masked.ndjson', '--stop-at', '0', '--out', 'x']), 2, /^span pretrain: --stop-at: expected an integer ≥ 1, got 0/)
    oneLine(
      span(['finetune', 'glue', '--task', 'sst2', '--train', 'sst.tsv', '--out', 'x', '--warmup-proportion', '2']),
      2,
      /^span finetune glue: --warmup-proportion: expected a number in \[0, 1\], got 2/,
    )
    expect(existsSync(at('x'))).toBe(false)
  })

  it('__proto__ in --config is an unknown setting of that file', () => {
    writeFileSync(at('proto.json'), '{"__proto__": {"lr": 5}}\n')
    oneLine(span(['pretrain', 'masked.ndjson', '--config', 'proto.json', '--out', 'x']), 1, /^span pretrain: proto\.json: unknown setting "__proto__"/)
  })
})

describe('cause 8: a FILE argument and --input both given, for every command that takes both (from the manifest)', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {args: object; flags: object}>}
  const both = Object.entries(manifest.commands)
    .filter(([, c]) => 'file' in c.args && 'input' in c.flags)
    .map(([id]) => id)
  it('has commands to walk', () => expect(both.length).toBeGreaterThan(6))
  it.each(both)('%s', (id) => {
    const required = ['encode', 'fill', 'tag'].includes(id) ? ['--model', fixture] : []
    const r = span([...id.split(':'), ...required, '-i', 'text.txt', 'other.txt'])
    oneLine(r, 2, new RegExp(`^span ${id}: give the input once: the FILE argument "other\\.txt" or --input "text\\.txt", not both$`))
  })
})

describe('cause 9: exit codes by one rule', () => {
  it.each([
    [['pretrain', 'masked.ndjson', '--lr', '-1', '--out', 'x'], /^span pretrain: --lr must be a number in \[0, 10\], got -1$/],
    [['pretrain', 'masked.ndjson', '--hidden', '130', '--heads', '3', '--out', 'x'], /hidden size 130 is not a multiple of 3 attention heads/],
    [['pretrain', 'masked.ndjson', '--objectives', 'sbo', '--out', 'x'], /^span pretrain: --objectives must be .*includes mlm/],
    [['inspect', '--p', '0', 'text.txt'], /^span inspect: --p must be a number in \(0, 1\], got "0"$/],
    [['tokenize', '--doc-start', '(', 'text.txt'], /^span tokenize: --doc-start: Invalid regular expression/],
    [['eval', 'glue', '--task', 'bogus', '--gold', 'g', '--pred', 'p'], /^span eval glue: unknown GLUE task "bogus"/],
    [['segment-ngrams', 'text.txt'], /^span segment-ngrams: give one of --build/],
    [['predict', 'squad', '--model', fixture, '--data', 'd', '--null-threshold', 'abc'], /--null-threshold must be a number, got "abc"$/],
    [['eval', 'squad', '--data', 'd', '--pred', 'p', '--na-prob-thresh', 'abc'], /--na-prob-thresh must be a number, got "abc"$/],
  ])('a flag value wrong on its own or with other flags: 2 (%j)', (args, re) => {
    oneLine(span(args), 2, re)
    expect(existsSync(at('x'))).toBe(false)
  })

  it('the same values read from a --config file are that file’s error: 1, naming it', () => {
    writeFileSync(at('lr.json'), '{"lr": -1}\n')
    oneLine(
      span(['pretrain', 'masked.ndjson', '--config', 'lr.json', '--out', 'x']),
      1,
      /^span pretrain: lr\.json: setting "lr" must be a number in \[0, 10\], got -1$/,
    )
  })

  it('a vocabulary larger than the model’s, and a missing --vocab file: 1', () => {
    writeFileSync(at('big-vocab.txt'), readFileSync(join(fixture, 'vocab.txt'), 'utf8') + 'extra\n')
    oneLine(
      span(['encode', '--model', fixture, '--vocab', 'big-vocab.txt'], '{"doc":0,"ids":[2,3]}\n'),
      1,
      /big-vocab\.txt: 101 tokens, more than the model's vocab_size 100/,
    )
    oneLine(span(['encode', '--model', fixture, '--vocab', 'nope.txt'], '{"doc":0,"ids":[2,3]}\n'), 1, /^span encode: --vocab: nope\.txt: no such file$/)
  })
})

describe('cause 10: library wording said in span’s voice', () => {
  it('a truncated config.json or finetune_config.json: the file, line and column', () => {
    cpSync(fixture, at('trunc'), {recursive: true})
    writeFileSync(at('trunc', 'config.json'), readFileSync(join(fixture, 'config.json'), 'utf8').slice(0, 40))
    oneLine(span(['encode', '--model', 'trunc'], '{"doc":0,"ids":[2,3]}\n'), 1, /^span encode: trunc\/config\.json:\d+: invalid JSON at column \d+: /)
    cpSync(at('sst-run'), at('trunc-run'), {recursive: true})
    const cfg = join('trunc-run', 'best', 'finetune_config.json')
    writeFileSync(at(cfg), readFileSync(at(cfg), 'utf8').slice(0, 30)) // sst-run: made by the RTE case above
    oneLine(span(['predict', 'glue', '--model', 'trunc-run', '--data', 'sst.tsv']), 1, /finetune_config\.json:\d+: invalid JSON at column \d+: /)
  })

  it('--svg on a full device: span’s line, not Node’s "ENOSPC: no space left on device, write"', () => {
    if (!existsSync('/dev/full')) return
    oneLine(
      span(['inspect', '--svg', '/dev/full', 'masked.ndjson']),
      1,
      /^span inspect: --svg \/dev\/full: cannot write \(no space left on device \(ENOSPC\)\)$/,
    )
  })

  it('control characters of an input excerpt are escaped: the error stays one line and drives no terminal', () => {
    writeFileSync(at('ctrl.ndjson'), '{"doc": 0, "ids": [1, 2]}\n\u001b[2J\u001b]0;pwned\u0007 not json\n')
    const r = span(['inspect', 'ctrl.ndjson'])
    expect([...r.stderr].filter((c) => c === '\u001b' || c === '\u0007')).toEqual([])
    expect(r.stderr.split('\n')).toHaveLength(2) // one line and its newline
    oneLine(r, 1, /^span inspect: ctrl\.ndjson:2: invalid JSON.*\\u001b/)
  })

  it('a path with a newline stays one line', () => {
    copyFileSync(at('text.txt'), at('new\nline.txt'))
    const r = span(['inspect', '--p', '2', 'new\nline.txt'])
    oneLine(r, 2, /^span inspect: --p must be/)
    const missing = span(['block', 'gone\nfile.ndjson'])
    expect(missing.stderr).toBe('span block: "gone\\nfile.ndjson": no such file\n')
  })
})
