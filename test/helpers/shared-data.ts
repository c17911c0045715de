/**
 * The real data sets tests read from `../shared/data` beside the checkout (WikiText-2, the BERT
 * vocabularies, SQuAD, GLUE; see that folder's SOURCES.md), never copied into the repository.
 * SPAN_SHARED_DATA names another folder (a path that does not exist shows how the suite runs
 * without the data). A suite that needs files that are absent is skipped with its reason.
 */
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {describe, it} from 'vitest'

export const SHARED_DATA = process.env.SPAN_SHARED_DATA ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'data')

/** A path under the shared data folder, e.g. sharedPath('vocab', 'bert-base-cased.txt'). */
export const sharedPath = (...parts: string[]): string => join(SHARED_DATA, ...parts)

/** Why a test cannot run (the files under the shared folder that are absent), or null when all are there. */
export function missingShared(...paths: string[]): string | null {
  const absent = paths.filter((p) => !existsSync(sharedPath(p)))
  return absent.length === 0 ? null : `shared data absent: ${absent.join(', ')} under ${SHARED_DATA}`
}

type Suite = (name: string, fn: () => void) => void

/**
 * `describe` for suites that need the given files under the shared folder: when one is absent
 * the suite's body is not run (it may read the data) and one skipped test carries the reason.
 */
export function describeShared(...paths: string[]): Suite {
  const why = missingShared(...paths)
  if (why === null) return (name, fn) => describe(name, fn)
  return (name) => describe(name, () => it.skip(why, () => {}))
}

/**
 * A value built from shared files at a test module's top level: `make()` when they are all
 * present, else undefined, which only suites skipped by describeShared would have touched.
 */
export function ifShared<T>(paths: string[], make: () => T): T {
  return (missingShared(...paths) === null ? make() : undefined) as T
}
