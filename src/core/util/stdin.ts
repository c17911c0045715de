/**
 * All of stdin, synchronously, for the commands that take `-` as a file name. fd 0 is read
 * directly (opening /dev/stdin fails with ENXIO where stdin is a socket, as Node's child
 * processes get); where it is non-blocking, EAGAIN waits a moment and reads on. At most the
 * bound of what it is read as (read-whole.ts).
 */
import {readSync} from 'node:fs'
import {type FileKind, readFdSync} from './read-whole.js'

const pause = new Int32Array(new SharedArrayBuffer(4))

export function readStdinSync(kind: FileKind = 'task'): Buffer {
  return readFdSync(0, '-', kind, (buf, at, n) => {
    for (;;) {
      try {
        return readSync(0, buf, at, n, null)
      } catch (err) {
        const code = (err as {code?: string}).code
        if (code === 'EOF') return 0 // Windows: the writer closed the pipe
        if (code !== 'EAGAIN') throw err
        Atomics.wait(pause, 0, 0, 5) // 5 ms, then read again
      }
    }
  })
}
