// SpanError and errorAt live in core/util (a leaf every area may import); re-exported here.
export {SpanError, errorAt} from '../util/errors.js'

/** Thrown when the reader downstream went away (`| head`): the command ends quietly with 0. */
export class PipeClosed extends Error {
  constructor() {
    super('downstream pipe closed')
    this.name = 'PipeClosed'
  }
}

export function isPipeClosed(err: unknown): boolean {
  if (err instanceof PipeClosed) return true
  const code = (err as {code?: string} | null)?.code
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED'
}
