// Issue 25, causes 5, 6 and 11, as a user meets them (real processes of bin/run.js): a small
// stdout on a full disk is an error; every file read whole is bounded by what it is (/dev/zero as
// a vocabulary, a config, a prediction file), as are a torch view's expansion, --k/--beam/--threads
// and --doc-start's time; a permission error is said as one (run as `nobody`), and a JSON 1e999
// is not shown as null. SPAN_TEST_BIN runs the same cases against another build.
import {spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {BIN, pool} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {statePickle} from '../../src/core/model/torch/torch-save.js'
import {writeZip} from '../../src/core/model/torch/zip-write.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab, writeBlocks} from '../core/train/helpers.js'

const bin = process.env.SPAN_TEST_BIN ?? BIN
const tmp = mkdtempSync(join(tmpdir(), 'span-bounds-'))
chmodSync(tmp, 0o755) // `nobody` runs span in here
const ckpt = join(tmp, 'ckpt')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}
function span(args: string[], o: {uid?: number; timeout?: number; input?: string} = {}): Run {
  const env = o.uid === undefined ? process.env : {...process.env, HOME: tmp} // oclif reads HOME's config
  const r = spawnSync(process.execPath, [bin, ...args], {cwd: tmp, encoding: 'utf8', uid: o.uid, env, timeout: o.timeout ?? 120_000, input: o.input})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const spanAsync = (args: string[]) => Promise.resolve(span(args))
/** One line on stderr, `span CMD: ` first, matching `re`. */
const oneLine = (r: Run, cmd: string, re: RegExp) => {
  expect(r.stderr.split('\n').filter((l) => l !== '' && !/^(span )?[a-z ]+: (config|model|from|step|effective|pretrain)/.test(l))).toEqual([
    expect.stringMatching(new RegExp(`^span ${cmd}: .*${re.source}`)),
  ])
}

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), 5)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  writeFileSync(join(tmp, 'text.txt'), 'the quick brown fox\n\njumps over the lazy dog\n')
  writeBlocks(join(tmp, 'blocks.ndjson'), 20, 1)
  writeFileSync(join(tmp, 'nli.jsonl'), JSON.stringify({premise: 'a', hypothesis: 'b', label: 'entailment'}) + '\n')
  // a torch.save file whose one tensor is one byte viewed (stride 0) as 40000 × 40000
  const dir = join(tmp, 'expand')
  mkdirSync(dir)
  copyFileSync(join(ckpt, 'config.json'), join(dir, 'config.json'))
  copyFileSync(join(ckpt, 'vocab.txt'), join(dir, 'vocab.txt'))
  await writeZip(join(dir, 'pytorch_model.bin'), [
    {name: 'archive/data.pkl', data: expandedPickle()},
    {name: 'archive/data/0', data: new Uint8Array(1)},
    {name: 'archive/version', data: new TextEncoder().encode('3\n')},
  ])
})

/** statePickle of a [40000, 40000] U8 tensor with its storage's numel patched to 1 and its strides to (0, 0). */
function expandedPickle(): Uint8Array {
  const p = statePickle([['bert.embeddings.word_embeddings.weight', {dtype: 'U8', shape: [40000, 40000], bytes: new Uint8Array(0)}]])
  const int = (v: number) => [0x4a, v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >>> 24) & 255]
  const hex = (b: number[] | Uint8Array) => Buffer.from(b).toString('hex')
  const s = hex(p)
    .replace(hex(int(1_600_000_000)), hex(int(1)))
    .replace(hex([0x28, ...int(40000), ...int(1), 0x74]), hex([0x28, ...int(0), ...int(0), 0x74]))
  return Uint8Array.from(Buffer.from(s, 'hex'))
}

describe('cause 5: every stdout write is awaited; its error is one line, exit 1', () => {
  it('doctor, eval, vocab, tokenize and plot to /dev/full', async () => {
    writeFileSync(join(tmp, 'pred.txt'), 'entailment\n')
    writeFileSync(join(tmp, 'metrics.ndjson'), '{"step":1,"loss":2}\n')
    const cases = [
      ['doctor'],
      ['eval', 'nli', '--gold', 'nli.jsonl', '--pred', 'pred.txt'],
      ['vocab', 'text.txt', '--size', '40'],
      ['tokenize', 'text.txt'],
      ['plot', 'metrics.ndjson'],
    ]
    const rs = await pool(
      cases.map(
        (c) => () => Promise.resolve(spawnSync('bash', ['-c', `'${process.execPath}' '${bin}' ${c.join(' ')} > /dev/full`], {cwd: tmp, encoding: 'utf8'})),
      ),
      2,
    )
    rs.forEach((r, i) => {
      expect(r.status, `${cases[i].join(' ')}: ${r.stderr}`).toBe(1)
      expect(
        r.stderr
          .split('\n')
          .filter((l) => l.startsWith('span '))
          .at(-1),
      ).toMatch(/: stdout: no space left on device \(ENOSPC\)$/)
    })
  })
})

describe('cause 6: unbounded reads and work are bounded', () => {
  it('/dev/zero as a vocabulary, a config, a unigram file, a prediction file: refused by name, in seconds', async () => {
    const cases: [string, string[], RegExp][] = [
      ['tokenize', ['tokenize', 'text.txt', '--vocab', '/dev/zero'], /\/dev\/zero: more than 64 MB, too large for a vocabulary file/],
      ['pretrain', ['pretrain', 'blocks.ndjson', '--config', '/dev/zero', '--out', 'p'], /\/dev\/zero: more than 16 MB, too large for a JSON settings file/],
      ['mask', ['mask', 'blocks.ndjson', '--unigram', '/dev/zero'], /\/dev\/zero: more than 64 MB, too large for a unigram counts file/],
      ['eval nli', ['eval', 'nli', '--gold', 'nli.jsonl', '--pred', '/dev/zero'], /\/dev\/zero: more than 256 MB, too large for a predictions file/],
      ['eval squad', ['eval', 'squad', '--data', '/dev/zero', '--pred', 'x'], /\/dev\/zero: more than 512 MB, too large for a data file read whole/],
    ]
    const rs = await pool(
      cases.map(
        ([, a]) =>
          () =>
            spanAsync(a),
      ),
      2,
    )
    rs.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(1)
      oneLine(r, cases[i][0], cases[i][2])
    })
  })

  it('a torch view of one byte expanded (stride 0) to 40000 × 40000 is refused before it is copied out', () => {
    const r = span(['export', '--model', 'expand', '--to', 'expanded-out', '--format', 'safetensors'], {timeout: 60_000})
    expect(r.code, r.stderr).toBe(1)
    oneLine(r, 'export', /a view of 1600000000 elements .* over a storage of 1: an expansion past 16777216 elements is refused/)
  })

  it('--k, --beam and --threads past their bounds are usage errors', () => {
    for (const a of [
      ['fill', '--model', 'ckpt', '--k', '100000', '--beam', '100000'],
      ['doctor', '--threads', '100000'],
    ]) {
      const r = span(a, {input: 'the [MASK] fox\n'})
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/^span (fill|doctor): .*1000.*\n$/)
    }
  })

  it('--doc-start ^(a+)+$ on a crafted line takes linear time; a backreference is refused', () => {
    writeFileSync(join(tmp, 'crafted.txt'), `x\n${'a'.repeat(5000)}b\n`)
    const r = span(['tokenize', 'crafted.txt', '--doc-start', '^(a+)+$', '-o', '/dev/null'], {timeout: 30_000})
    expect(r.code, r.stderr).toBe(0)
    const back = span(['tokenize', 'crafted.txt', '--doc-start', '(a)\\1', '-o', '/dev/null'])
    expect(back.code, back.stderr).toBe(2) // a flag's value wrong on its own
    oneLine(back, 'tokenize', /--doc-start: .* needs backtracking/)
  })
})

describe('cause 11: errors say what happened', () => {
  it('a unigram file `nobody` may not read is "permission denied", not "not found"', () => {
    writeFileSync(join(tmp, 'secret.txt'), '1\n')
    chmodSync(join(tmp, 'secret.txt'), 0o600)
    const r = span(['mask', 'blocks.ndjson', '--unigram', 'secret.txt', '-o', '/dev/null'], {uid: 65534})
    expect(r.code).toBe(1)
    oneLine(r, 'mask', /secret\.txt: permission denied \(EACCES\)/)
  })

  it('a token id 1e999 is shown as Infinity, not null', () => {
    const r = span(['inspect'], {input: '{"doc":0,"ids":[2,1e999,3]}\n'})
    expect(r.code).toBe(1)
    oneLine(r, 'inspect', /ids\[1\] = Infinity/)
  })
})
