// SpanError and errorAt live in core/util (a leaf every area may import); re-exported here.
export {SpanError, UsageError, errorAt} from '../util/errors.js'

/** Thrown when the reader downstream went away (`| head`): the command ends quietly with 0. */
export class PipeClosed extends Error {
  constructor() {
    super('downstream pipe closed')
    this.name = 'PipeClosed'
  }
}

/**
 * Only EPIPE (and our PipeClosed) means the reader went away. ERR_STREAM_DESTROYED is not: a
 * stream is destroyed after any error, and a full disk must never pass for a closed pipe.
 */
export function isPipeClosed(err: unknown): boolean {
  if (err instanceof PipeClosed) return true
  return (err as {code?: string} | null)?.code === 'EPIPE'
}
