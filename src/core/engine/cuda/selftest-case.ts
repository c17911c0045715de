import type * as tf from '@tensorflow/tfjs'

/**
 * One input of `span doctor --selftest` (core/doctor/selftest.ts runs it on the reference backend
 * and on cuda): its outputs, seeded so both backends see the same values. A case with a `row`
 * checks a device path that is no registered kernel (the multi-tensor AdamW, bf16 products): the
 * table gives it that row of its own. In a file of its own so that the files of cases
 * (selftest-cases.ts, selftest-bf16.ts, core/doctor/selftest-optimiser.ts) share it without
 * importing each other in a circle.
 */
export type SelftestCase = {label: string; f: () => tf.Tensor | tf.Tensor[]; row?: string}
