import {SpanError} from '../stream/errors.js'

/** An error every rank met at the same point (told once, by rank 0; the job ends cleanly). */
export class CollectiveError extends SpanError {}
