/**
 * Which CoNLL-2012 files an input names: `-` (stdin), one `.conll` file, a folder (its `*.conll`
 * files in C-locale name order), or a split's id list. LitBank's `tenfold_splits/K/NAME.ids`
 * names documents `<id>_brat.tsv`, read as `<id>_brat.conll` in the first of the list's own
 * folder, `../conll/` and `../../conll/` that holds the first of them. A folder with a split
 * name takes GUM's `splits.md` (in the folder or its parent: `## dev` then `* GUM_x` lines;
 * without a `## train` section, train is every file no section lists; listed files the folder lacks, such as GUM's
 * left-out reddit documents, are skipped), or, beside LitBank's `conll/`, `tenfold_splits/`
 * with a split `K/NAME` (e.g. `0/dev`).
 */
import {existsSync, readdirSync, statSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {errorIn, SpanError} from '../../util/errors.js'
import {readTaskText} from '../common/records.js'

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory()

/** The `.conll` files of a folder, sorted by name as C's strcmp would. */
function conllFiles(dir: string): string[] {
  const names = readdirSync(dir)
    .filter((n) => n.endsWith('.conll'))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  if (names.length === 0) throw errorIn(dir, 'no .conll files in this folder')
  return names.map((n) => join(dir, n))
}

/** LitBank ids (`105_persuasion_brat.tsv`) to the conll files they name. */
function idListFiles(path: string): string[] {
  const ids = readTaskText(path)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
  if (ids.length === 0) throw errorIn(path, 'empty id list')
  const names = ids.map((id) => id.replace(/\.tsv$/, '') + '.conll')
  const here = dirname(path)
  const dirs = [here, join(here, '..', 'conll'), join(here, '..', '..', 'conll')]
  const dir = dirs.find((d) => existsSync(join(d, names[0] as string)))
  if (dir === undefined) throw errorIn(path, `${names[0]} is in none of ${dirs.join(', ')}`)
  return names.map((n) => join(dir, n))
}

/** GUM's splits.md: section name → document names. */
export function parseSplitsMd(text: string): Map<string, string[]> {
  const sections = new Map<string, string[]>()
  let current: string[] | null = null
  for (const line of text.split('\n')) {
    const head = /^##\s+(\S+)\s*$/.exec(line)
    if (head) sections.set(head[1] as string, (current = []))
    const item = /^\s*\*\s+(\S+)\s*$/.exec(line)
    if (item && current) current.push(item[1] as string)
  }
  return sections
}

/** A folder's files of one GUM split. */
function gumSplitFiles(dir: string, md: string, split: string): string[] {
  const sections = parseSplitsMd(readTaskText(md))
  const all = conllFiles(dir)
  const stem = (f: string) => basename(f, '.conll')
  if (split === 'train' && !sections.has('train')) {
    const listed = new Set([...sections.values()].flat())
    return all.filter((f) => !listed.has(stem(f)))
  }
  const names = sections.get(split)
  if (names === undefined) throw new SpanError(`${md}: no split '${split}' (it has ${[...new Set(['train', ...sections.keys()])].join(', ')})`, 2)
  const wanted = new Set(names)
  const files = all.filter((f) => wanted.has(stem(f)))
  // OntoGUM's folder lacks some of GUM's documents (its dev split 2 of 32), so a partial split is
  // the data as published; a split of none would score (eval) or train on nothing: refused the same
  // way by every command that reads a split (issue 36).
  if (files.length === 0)
    throw errorIn(
      dir,
      names.length === 0
        ? `${basename(md)}'s split '${split}' names no documents`
        : `none of the ${names.length} documents ${basename(md)}'s split '${split}' names is here (e.g. ${names[0]}.conll)`,
    )
  return files
}

/** A folder's files of a split, by GUM's splits.md or LitBank's tenfold_splits/. */
function splitFiles(dir: string, split: string): string[] {
  for (const md of [join(dir, 'splits.md'), join(dir, '..', 'splits.md')]) if (existsSync(md)) return gumSplitFiles(dir, md, split)
  for (const folds of [join(dir, 'tenfold_splits'), join(dir, '..', 'tenfold_splits')]) {
    if (!isDir(folds)) continue
    const m = /^([0-9]+)\/(train|dev|test)$/.exec(split)
    if (!m) throw new SpanError(`split '${split}': LitBank splits are FOLD/NAME, e.g. 0/dev`, 2)
    return idListFiles(join(folds, m[1] as string, `${m[2]}.ids`))
  }
  throw errorIn(dir, `no splits.md (GUM) or tenfold_splits/ (LitBank) in or beside this folder for split '${split}'`)
}

/** The files (or `-`) an input names, in reading order. */
export function conllInputs(path: string, split?: string): string[] {
  if (path === '-') {
    if (split !== undefined) throw new SpanError('a split selects files of a folder; stdin is one stream', 2)
    return ['-']
  }
  if (!existsSync(path)) throw errorIn(path, 'file not found')
  if (isDir(path)) return split === undefined ? conllFiles(path) : splitFiles(path, split)
  if (split !== undefined) throw new SpanError(`a split selects files of a folder; ${path} is a file`, 2)
  return path.endsWith('.ids') ? idListFiles(path) : [path]
}
