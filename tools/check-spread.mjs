#!/usr/bin/env node
// No spread arguments over data (issue 36, cause 1): `f(...xs)` puts every element of xs on the
// call stack, so `Math.max(...scores)` or `out.push(...ids)` ends in "Maximum call stack size
// exceeded" once xs has ~120,000 elements (V8, Node 20; a long document's candidate spans reach
// that). Whether an array is data-sized cannot be decided from the text, so the rule is strict:
// every spread in the arguments of a call or `new` in src/, bench/ and tools/ fails, unless its
// line (or a comment line just above) says why it is bounded with a `spread-ok: <reason>` comment (a fixed
// list of flags, a row of a table, the heads of a model). Array and object literals (`[...xs]`,
// `{...o}`, `new Set([...xs])`) copy without the stack and are fine. Reads the files with the
// TypeScript compiler's parser, as check-sizes.mjs does; prints each offender and exits 1.
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import ts from 'typescript'

const ROOT = join(import.meta.dirname, '..')
const DIRS = ['src', 'bench', 'tools']
const EXT = /\.(ts|mts|js|mjs|cjs)$/
const SKIP = new Set(['node_modules', 'out', '__pycache__'])

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) {
      if (!SKIP.has(name)) yield* files(p)
    } else if (EXT.test(name) && !name.endsWith('.d.ts')) yield p
  }
}

/** The spread arguments of calls and `new` in one source text: [line, text] of each. */
export function spreadCalls(path, text) {
  const src = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS)
  const lines = text.split('\n')
  const found = []
  const visit = (node) => {
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments)
      for (const arg of node.arguments) {
        if (!ts.isSpreadElement(arg)) continue
        const line = src.getLineAndCharacterOfPosition(arg.getStart(src)).line
        const allowed = /spread-ok: \S/.test(lines[line]) || /^\s*\/\/ spread-ok: \S/.test(lines[line - 1] ?? '')
        if (!allowed) found.push([line + 1, lines[line].trim()])
      }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return found
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bad = []
  for (const dir of DIRS)
    for (const p of files(join(ROOT, dir)))
      for (const [line, code] of spreadCalls(p, readFileSync(p, 'utf8'))) bad.push(`${relative(ROOT, p)}:${line}: ${code}`)
  if (bad.length > 0) {
    console.error(bad.join('\n'))
    console.error(
      `check-spread: ${bad.length} spread argument(s): f(...xs) overflows the call stack on a data-sized xs; use a loop (push), reduce (max/min) or a typed array, or mark a bounded one with "spread-ok: <why bounded>"`,
    )
    process.exit(1)
  }
}
