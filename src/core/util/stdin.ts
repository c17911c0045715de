/**
 * All of stdin, synchronously, for the commands that take `-` as a file name. fd 0 is read
 * directly (opening /dev/stdin fails with ENXIO where stdin is a socket, as Node's child
 * processes get); where it is non-blocking, EAGAIN waits a moment and reads on.
 */
import {readSync} from 'node:fs'

const pause = new Int32Array(new SharedArrayBuffer(4))

export function readStdinSync(): Buffer {
  const chunks: Buffer[] = []
  const buf = Buffer.alloc(1 << 16)
  for (;;) {
    let n: number
    try {
      n = readSync(0, buf, 0, buf.length, null)
    } catch (err) {
      const code = (err as {code?: string}).code
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 5) // 5 ms, then read again
        continue
      }
      if (code === 'EOF') return Buffer.concat(chunks) // Windows: the writer closed the pipe
      throw err
    }
    if (n === 0) return Buffer.concat(chunks)
    chunks.push(Buffer.from(buf.subarray(0, n)))
  }
}
