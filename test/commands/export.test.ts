// `span export` as a user runs it (dist/ must be built): span checkpoint → pytorch_model.bin →
// read back; and torch.load (Debian's PyTorch, skipped without it) reads what we wrote.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {type HostTensor, readSafetensors} from '../../src/core/model/safetensors.js'
import {readTorchFile} from '../../src/core/model/torch/torch-load.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-export-'))
const ckpt = join(tmp, 'ckpt')
const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], {encoding: 'utf8'}).status === 0

function span(args: string[]) {
  const r = spawnSync('node', [bin, 'export', ...args], {cwd: root, encoding: 'utf8'})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, objectives: ['mlm', 'sbo', 'nsp']}), 5)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
})

describe('span export', () => {
  it('round trip: safetensors → pytorch_model.bin → safetensors, identical tensors, names and files', async () => {
    const pt = join(tmp, 'pt')
    const r = span(['--model', ckpt, '--to', pt, '--format', 'pytorch'])
    expect(r.code, r.stderr).toBe(0)
    const orig = (await readSafetensors(join(ckpt, 'model.safetensors'))).tensors
    const back = await readTorchFile(join(pt, 'pytorch_model.bin'))
    expect([...back.keys()]).toEqual([...orig.keys()])
    const stored = (t: HostTensor) => ({dtype: t.dtype, shape: t.shape, bytes: Buffer.from(t.bytes)}) // not how it was read (`own`)
    for (const [name, t] of orig) expect(stored(back.get(name)!)).toEqual(stored(t))
    for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json']) expect(existsSync(join(pt, f))).toBe(true)
    expect(JSON.parse(readFileSync(join(pt, 'tokenizer_config.json'), 'utf8'))).toMatchObject({do_lower_case: expect.any(Boolean), model_max_length: 32})
    const st = join(tmp, 'st')
    expect(span(['--model', pt, '--to', st, '--format', 'safetensors']).code).toBe(0)
    expect(readFileSync(join(st, 'model.safetensors'))).toEqual(readFileSync(join(ckpt, 'model.safetensors')))
  })

  it('checkpoints span writes carry tokenizer_config.json and special_tokens_map.json', () => {
    expect(JSON.parse(readFileSync(join(ckpt, 'special_tokens_map.json'), 'utf8'))).toEqual({
      unk_token: '[UNK]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      cls_token: '[CLS]',
      mask_token: '[MASK]',
    })
    expect(JSON.parse(readFileSync(join(ckpt, 'tokenizer_config.json'), 'utf8')).model_max_length).toBe(32)
  })

  it('bad input: one line, non-zero exit, nothing written', () => {
    const r = span(['--model', join(tmp, 'nowhere'), '--to', join(tmp, 'never'), '--format', 'pytorch'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(join(tmp, 'never'))).toBe(false)
  })

  it.skipIf(!hasTorch)('torch.load reads the exported file: names, shapes, values (and a deflated re-zip of it reads back here)', async () => {
    const pt = join(tmp, 'pt')
    const script = `
import json, sys, torch, zipfile
sd = torch.load(sys.argv[1], map_location='cpu')
print(json.dumps({k: [list(v.shape), str(v.dtype), float(v.double().sum())] for k, v in sd.items()}))
with zipfile.ZipFile(sys.argv[1]) as zin, zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as zout:
    for i in zin.infolist(): zout.writestr(i.filename, zin.read(i.filename))
`
    const deflated = join(tmp, 'deflated.bin')
    const r = spawnSync('/usr/bin/python3', ['-c', script, join(pt, 'pytorch_model.bin'), deflated], {encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const got = JSON.parse(r.stdout) as Record<string, [number[], string, number]>
    const orig = (await readSafetensors(join(ckpt, 'model.safetensors'))).tensors
    expect(Object.keys(got)).toEqual([...orig.keys()])
    const {toFloat32} = await import('../../src/core/model/safetensors.js')
    for (const [name, t] of orig) {
      expect(got[name][0]).toEqual(t.shape)
      expect(got[name][1]).toBe('torch.float32')
      expect(got[name][2]).toBeCloseTo(
        toFloat32(t).reduce((a, b) => a + b, 0),
        3,
      )
    }
    const again = await readTorchFile(deflated)
    expect(Buffer.from(again.get('cls.predictions.bias')!.bytes)).toEqual(Buffer.from(orig.get('cls.predictions.bias')!.bytes))
  })
})
