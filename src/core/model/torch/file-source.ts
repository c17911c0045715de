import {readSync} from 'node:fs'
import {SpanError} from '../../stream/errors.js'
import {readError} from '../../util/fs-errors.js'
import type {ByteSource} from './zip.js'

/** The most one read asks of the kernel (Linux caps a read near 2 GiB). */
const MAX_READ = 2 ** 30

/**
 * A regular file of `size` bytes, open as `fd`, read where asked (pread: readSync at a position),
 * each read into a new buffer of its own. A file that ends before the bytes asked (it shrank while
 * read) is refused, as readSafetensors refuses it; a failed read is `PATH: reason (CODE)`.
 */
export function fileSource(fd: number, size: number, path: string): ByteSource {
  return {
    size,
    at(position: number, n: number): Uint8Array {
      const out = new Uint8Array(n)
      let at = 0
      while (at < n) {
        let got: number
        try {
          got = readSync(fd, out, at, Math.min(n - at, MAX_READ), position + at)
        } catch (err) {
          throw readError(err, path)
        }
        if (got === 0)
          throw new SpanError(
            `${path}: truncated data: the file ended at byte ${position + at} while ${n - at} more bytes were read (did it change while read?)`,
          )
        at += got
      }
      return out
    },
  }
}
