import type {Readable} from 'node:stream'

// In a file of its own so that bytelines.ts, which reads a Source, need not import lines.ts,
// which opens one and imports bytelines.ts.
/** A named input: `-` is stdin, anything else a file path. */
export interface Source {
  name: string // shown in errors: `stdin` or the path
  stream: Readable
}
