/**
 * Where an output file is written. A regular file (or a new name) is written to a temporary
 * sibling of its real path and renamed over it, so it lands whole or not at all, and a symbolic
 * link keeps pointing at the file it names. Anything else that exists (a character device such
 * as /dev/null or /dev/stdout, a FIFO from `<(…)`/`>(…)`, a socket) is written in place: a
 * rename would replace the device node or the pipe with a plain file (as root, /dev/null itself).
 */
import {readlink, realpath, stat} from 'node:fs/promises'
import {basename, dirname, join, resolve} from 'node:path'
import {SpanError} from './errors.js'

export type OutputTarget = {direct: true; path: string} | {direct: false; path: string; tmp: string}

/** The target of `path`: written in place (direct), or through `tmp` renamed onto `path`. */
export async function outputTarget(path: string, tmpName = (base: string) => `.${base}.tmp-${process.pid}`): Promise<OutputTarget> {
  const s = await stat(path).catch(() => null) // follows links
  if (s && !s.isFile() && !s.isDirectory()) return {direct: true, path}
  const real = s ? await realpath(path) : await realPathOf(path) // a dangling link: the file it names is made, the link kept
  return {direct: false, path: real, tmp: join(dirname(real), tmpName(basename(real)))}
}

/**
 * The real path of `path`, which need not exist: the longest existing prefix through realpath
 * (symbolic links, `.`, `..`, trailing slashes), the rest appended. Two spellings of one file or
 * directory give one string (issue 25: same-path checks compare real paths, not spellings).
 */
export async function realPathOf(path: string, depth = 0): Promise<string> {
  const abs = resolve(path)
  const rest: string[] = []
  for (let p = abs; ; p = dirname(p)) {
    const real = await realpath(p).catch(() => null)
    // spread-ok: a path's components (PATH_MAX bounds them)
    if (real !== null) return join(real, ...rest.reverse())
    const link = depth < 40 ? await readlink(p).catch(() => null) : null // a dangling link: where it points
    // spread-ok: a path's components (PATH_MAX bounds them)
    if (link !== null) return realPathOf(join(resolve(dirname(p), link), ...rest.reverse()), depth + 1)
    if (dirname(p) === p) return abs
    rest.push(basename(p))
  }
}

/** The file's device and inode (hard links and bind mounts of one file are one file), or null when absent. */
async function identity(path: string): Promise<string | null> {
  const s = await stat(path).catch(() => null)
  return s ? `${s.dev}:${s.ino}` : null
}

/** True when the two paths are one file or directory (by real path, or by device and inode). */
export async function samePlace(a: string, b: string): Promise<boolean> {
  if ((await realPathOf(a)) === (await realPathOf(b))) return true
  const [ia, ib] = [await identity(a), await identity(b)]
  return ia !== null && ia === ib
}

/** Flags that name an output file, and flags or arguments that name an input (file or directory). */
const OUTPUT_FLAGS = ['output', 'svg', 'write-unigram', 'to']
export const INPUT_FLAGS = [
  'file',
  'input',
  'vocab',
  'unigram',
  'model',
  'data',
  'gold',
  'pred',
  'a',
  'b',
  'dict',
  'config',
  'init',
  'train',
  'dev',
  'eval',
  'na-prob',
  'resume',
]

/** Commands whose output flag is a folder, and the files they write into it. */
const FOLDER_OUTPUTS: Record<string, {flag: string; files: string[]}> = {
  'predict:squad': {flag: 'output', files: ['predictions.json', 'nbest_predictions.json', 'null_odds.json']},
  'predict:mrqa': {flag: 'output', files: ['predictions.json']},
  export: {
    flag: 'to',
    files: ['config.json', 'model.safetensors', 'pytorch_model.bin', 'vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json', 'span-manifest.json'],
  },
}

const flagName = (f: string) => (f === 'file' ? 'the input argument' : f === 'output' ? '-o' : `--${f}`)

/** True for a path span writes through a rename (a regular file, or nothing yet); devices and FIFOs are shared freely (-o /dev/null twice). */
async function renamedOver(path: string): Promise<boolean> {
  const s = await stat(path).catch(() => null)
  return s === null || s.isFile() || s.isDirectory()
}

/**
 * Refuses, as a usage error (exit 2), two outputs that are one file and an output that is an
 * input (issue 25, cause 4: `mask --write-unigram m -o m` kept only the counts), comparing real
 * paths and inodes, not spellings. `-` (stdout, stdin) and devices are never compared.
 */
export async function refuseSharedPaths(id: string | undefined, flags: Record<string, unknown>, args: Record<string, unknown> = {}): Promise<void> {
  const given = (names: string[], from: Record<string, unknown>) =>
    names.filter((n) => typeof from[n] === 'string' && from[n] !== '-' && from[n] !== '').map((n) => ({flag: n, path: from[n] as string}))
  const folder = id ? FOLDER_OUTPUTS[id] : undefined
  const outputs = given(OUTPUT_FLAGS, flags).flatMap((o) => (o.flag === folder?.flag ? folder.files.map((f) => ({flag: o.flag, path: join(o.path, f)})) : [o]))
  const inputs = [...given(['file'], args), ...given(INPUT_FLAGS, flags)]
  if (folder && typeof flags[folder.flag] === 'string' && typeof flags.model === 'string' && (await samePlace(flags[folder.flag] as string, flags.model)))
    throw new SpanError(`${flagName(folder.flag)} ${flags[folder.flag]} is --model's own directory: write the output elsewhere`, 2)
  for (const [i, o] of outputs.entries()) {
    if (!(await renamedOver(o.path))) continue
    for (const p of outputs.slice(i + 1))
      if (p.flag !== o.flag && (await samePlace(o.path, p.path)))
        throw new SpanError(`${flagName(o.flag)} and ${flagName(p.flag)} name one file (${o.path}): give each output its own path`, 2)
    for (const p of inputs)
      if (await samePlace(o.path, p.path))
        throw new SpanError(`${flagName(o.flag)} ${o.path} is also ${flagName(p.flag)}, an input: writing it would replace what span reads; write elsewhere`, 2)
  }
}
