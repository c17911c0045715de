// Whole-input errors name their source (`-` as stdin), and an input too large for one string is
// refused by name before Node's ERR_STRING_TOO_LONG (which oclif would print as a two-line crash).
import {describe, expect, it} from 'vitest'
import {decodeWhole, errorAt, errorIn, MAX_STRING_LENGTH, SpanError} from '../../../src/core/util/errors.js'

describe('errorIn and errorAt', () => {
  it('name stdin for -, and keep a path as it is', () => {
    expect(errorIn('-', 'empty file').message).toBe('stdin: empty file')
    expect(errorIn('a/b.json', 'empty file').message).toBe('a/b.json: empty file')
    expect(errorAt('-', 3, 'bad').message).toBe('stdin:3: bad')
    expect(errorIn('x', 'y')).toBeInstanceOf(SpanError)
  })
})

describe('decodeWhole', () => {
  it('decodes UTF-8 up to the longest string', () => {
    expect(decodeWhole(Buffer.from('héllo 中'), 'f')).toBe('héllo 中')
  })

  it('refuses one byte more than a string holds, by name, without decoding', () => {
    const big = Buffer.allocUnsafe(MAX_STRING_LENGTH + 1) // untouched pages: no real memory
    expect(() => decodeWhole(big, '-')).toThrow('stdin: 512 MB, more than one string holds (512 MB); this command reads the file whole')
  })
})
