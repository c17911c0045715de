// The benchmarks' text input: WikiText-2 valid from ../shared/data, repeated to any size.
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Readable} from 'node:stream'
import {fileURLToPath} from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const TEXT = join(ROOT, '..', 'shared', 'data', 'wikitext', 'wikitext-2.valid.txt')
export const MB = 1 << 20

/** The corpus repeated to `bytes`, as a stream of 64 KiB chunks (like a file read). */
export function corpusStream(bytes) {
  const text = readFileSync(TEXT)
  let sent = 0
  let at = 0
  return new Readable({
    read() {
      if (sent >= bytes) return this.push(null)
      const n = Math.min(1 << 16, text.length - at, bytes - sent)
      this.push(text.subarray(at, at + n))
      sent += n
      at = (at + n) % text.length
    },
  })
}
