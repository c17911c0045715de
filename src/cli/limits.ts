import {MAX_STEP_ROWS} from '../core/train/config.js'

/**
 * Upper bounds of the integer flags that size an allocation (issue 36): a value past them is a
 * usage error (exit 2) at parse time, before any array or tensor is made, instead of V8's fatal
 * `invalid size error` (exit 133) or an `Invalid array length` mid-run. A step of more than 2^20
 * examples (16 times LAMB's 65,536, the largest batch BERT training has used) or micro-batches
 * is no run this code base serves; every other integer flag stops at 2^53 − 1, where numbers stop
 * being exact integers (SpanCommand.parse).
 */
export const MAX_BATCH = MAX_STEP_ROWS
