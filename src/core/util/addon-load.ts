import {existsSync} from 'node:fs'
import {resolve} from 'node:path'

/**
 * Loads a compiled Node addon (a `.node` shared object) from `path`, a relative one against the
 * working directory as the user typed it (SPAN_NATIVE_ADDON=build/x.node). process.dlopen, not
 * require: require reads a file that does not end in `.node` as JavaScript (V8's `Invalid or
 * unexpected token` for a broken addon) and resolves a relative path against span's own folder
 * (`Cannot find module`). A failure is one line in span's words: `PATH: not a loadable addon (why)`.
 */
export function loadAddonFile<T>(path: string): T {
  const full = resolve(path)
  if (!existsSync(full)) throw new Error(`${path}: no such file`)
  const module = {exports: {} as T}
  try {
    process.dlopen(module, full)
  } catch (err) {
    throw new Error(`${path}: not a loadable addon (${dlopenReason(err, full)})`)
  }
  return module.exports
}

/** The dynamic loader's reason without the path it repeats (`/x.node: invalid ELF header` → `invalid ELF header`). */
function dlopenReason(err: unknown, full: string): string {
  const text = (err instanceof Error ? err.message : String(err)).split('\n')[0]
  const reason = text.startsWith(`${full}: `) ? text.slice(full.length + 2) : text
  return reason.replace(/^.*?: cannot open shared object file: /, 'cannot open: ')
}
