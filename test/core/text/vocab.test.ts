import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect, it} from 'vitest'
import {describeShared, sharedPath} from '../../helpers/shared-data.js'
import {DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'vocab/bert-base-uncased.txt')

const SHARED = sharedPath('vocab')

describe('loadVocab', () => {
  it('reads Google BERT vocabularies: ids, special tokens, casing', () => {
    const cased = loadVocab(join(SHARED, 'bert-base-cased.txt'))
    expect(cased.info.size).toBe(28996)
    expect(cased.special).toEqual({pad: 0, unk: 100, cls: 101, sep: 102, mask: 103})
    expect(cased.cased).toBe(true)
    expect(cased.info.sha256).toMatch(/^[0-9a-f]{64}$/)
    const uncased = loadVocab(join(SHARED, 'bert-base-uncased.txt'))
    expect(uncased.info.size).toBe(30522)
    expect(uncased.cased).toBe(false)
    expect(uncased.ids.get('##ing')).toBe(uncased.tokens.indexOf('##ing'))
  })

  it('reads the embedded vocabulary: special tokens first', () => {
    const v = loadVocab(DEFAULT_VOCAB)
    expect(v.tokens.slice(0, 5)).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'])
    expect(v.cased).toBe(true)
  })

  it('takes do_lower_case from a tokenizer_config.json beside the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-vocab-'))
    writeFileSync(join(dir, 'vocab.txt'), '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nThe\n')
    expect(loadVocab(join(dir, 'vocab.txt')).cased).toBe(true)
    writeFileSync(join(dir, 'tokenizer_config.json'), '{"do_lower_case": true}')
    expect(loadVocab(join(dir, 'vocab.txt')).cased).toBe(false)
  })

  it('fails clearly on a missing file or a file without the special tokens', () => {
    expect(() => loadVocab('/nonexistent/vocab.txt')).toThrow('/nonexistent/vocab.txt: vocabulary file not found')
    const dir = mkdtempSync(join(tmpdir(), 'span-vocab-'))
    writeFileSync(join(dir, 'v.txt'), 'a\nb\n')
    expect(() => loadVocab(join(dir, 'v.txt'))).toThrow('not a BERT vocabulary (no [PAD] token)')
  })
})
