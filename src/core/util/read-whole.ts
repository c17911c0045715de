/**
 * Reading a file whole, with a bound that fits what it is (issue 25, cause 6: `--vocab /dev/zero`,
 * `--config /dev/zero`, `--pred /dev/zero` read for ever). A regular file over the bound is
 * refused by its size before a byte is read; anything else (a device, a FIFO, stdin) is read in
 * chunks and refused as soon as it passes the bound. The refusal names the file and what it was
 * read as: `PATH: more than 64 MB, too large for a vocabulary file (is it the right file?)`.
 */
import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {open} from 'node:fs/promises'
import {SpanError} from './errors.js'

const MB = 2 ** 20

/** The bounds, in bytes, by what a file is. */
export const LIMITS = {
  vocabulary: 64 * MB, // BERT's is 0.2 MB, a 250k-entry multilingual one under 5 MB
  config: 16 * MB, // config.json, finetune_config.json, --config, a training state, a shard index
  unigram: 64 * MB, // one count per vocabulary entry
  predictions: 256 * MB, // a prediction or label file, na-probs
  task: 0x1fffffe8, // a task's data file: it becomes one string (V8's longest, 512 MB)
  weights: 2 ** 32 - 1, // a weights file read into one Buffer (Node's largest, 4 GB)
  events: 512 * MB, // a TensorBoard event file
} as const

export type FileKind = keyof typeof LIMITS

const NAMES: Record<FileKind, string> = {
  vocabulary: 'a vocabulary file',
  config: 'a JSON settings file',
  unigram: 'a unigram counts file',
  predictions: 'a predictions file',
  task: 'a data file read whole',
  weights: 'a weights file',
  events: 'a TensorBoard event file',
}

const CHUNK = 4 * MB

/** The refusal of `path`, read as `kind`, past its bound. */
export function tooLarge(path: string, kind: FileKind): SpanError {
  const limit = LIMITS[kind]
  const size = limit >= 1024 * MB ? `${Math.round(limit / 1024 / MB)} GB` : `${Math.round(limit / MB)} MB`
  return new SpanError(`${path === '-' ? 'stdin' : path}: more than ${size}, too large for ${NAMES[kind]} (is it the right file?)`)
}

/**
 * The bytes read so far, in buffers filled one after another: a regular file's first buffer is
 * its size plus one byte (one read, no copy, the extra byte sees a file that grew); anything else
 * reads CHUNK at a time. Past the bound of `kind` it throws.
 */
class Collector {
  private chunks: Buffer[] = []
  private buf: Buffer
  private at = 0
  private total = 0
  private readonly limit: number

  constructor(
    st: {isFile(): boolean; size: number},
    private readonly path: string,
    private readonly kind: FileKind,
  ) {
    this.limit = LIMITS[kind]
    if (st.isFile() && st.size > this.limit) throw tooLarge(path, kind)
    this.buf = Buffer.allocUnsafe(st.isFile() ? st.size + 1 : CHUNK)
  }

  /** Where the next read goes: [buffer, offset, length]. */
  room(): [Buffer, number, number] {
    return [this.buf, this.at, this.buf.length - this.at]
  }

  /** Counts n bytes read into room(); false at the end (n = 0). */
  add(n: number): boolean {
    if (n === 0) return false
    this.at += n
    this.total += n
    if (this.total > this.limit) throw tooLarge(this.path, this.kind)
    if (this.at === this.buf.length) {
      this.chunks.push(this.buf)
      this.buf = Buffer.allocUnsafe(CHUNK)
      this.at = 0
    }
    return true
  }

  result(): Buffer {
    const chunks = [...this.chunks, this.buf.subarray(0, this.at)]
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.total)
  }
}

/** All of file descriptor `fd` (0: stdin), at most LIMITS[kind] bytes (else tooLarge). */
export function readFdSync(fd: number, path: string, kind: FileKind, read = (b: Buffer, at: number, n: number) => readSync(fd, b, at, n, null)): Buffer {
  const c = new Collector(fstatSync(fd), path, kind)
  // spread-ok: [buffer, offset, length]
  while (c.add(read(...c.room())));
  return c.result()
}

/** readFileSync(path) with the bound of `kind`; errors are Node's (ENOENT, EISDIR, EACCES) for the caller to word. */
export function readWholeSync(path: string, kind: FileKind): Buffer {
  const fd = openSync(path, 'r')
  try {
    return readFdSync(fd, path, kind)
  } finally {
    closeSync(fd)
  }
}

/** As readWholeSync, without blocking the event loop. */
export async function readWhole(path: string, kind: FileKind): Promise<Buffer> {
  const fh = await open(path, 'r')
  try {
    const c = new Collector(await fh.stat(), path, kind)
    // spread-ok: [buffer, offset, length]
    while (c.add((await fh.read(...c.room(), null)).bytesRead));
    return c.result()
  } finally {
    await fh.close()
  }
}

/** readWhole as UTF-8 text. */
export const readTextWhole = async (path: string, kind: FileKind): Promise<string> => (await readWhole(path, kind)).toString('utf8')

/** readWholeSync as UTF-8 text. */
export const readTextWholeSync = (path: string, kind: FileKind): string => readWholeSync(path, kind).toString('utf8')
