#!/usr/bin/env node
// The house rules on size (README, Development): a command file at most 120 lines, a function at
// most 40. Reads src/ with the TypeScript compiler's parser; prints each offender and exits 1.
// Exceptions are named here with their reason.
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import ts from 'typescript'

const ROOT = join(import.meta.dirname, '..')
const MAX_COMMAND = 120
const MAX_FUNCTION = 40
/** file:function → why it may be longer. */
const EXCEPTIONS = new Map([
  ['src/core/text/basic.ts:scan', 'the tokenizer hot loop: one pass over the code points, kept whole for speed'],
  [
    'src/core/text/byte-encoder.ts:byteEncoder',
    'the tokenizer hot loops (asciiLoop, wideLoop, each ≤ 40 lines) share the closure that keeps the id buffer and tables in registers; a class or module state would cost speed',
  ],
])

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) yield* files(p)
    else if (p.endsWith('.ts')) yield p
  }
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const p = node.parent
    if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text
    if (p && ts.isPropertyAssignment(p) && ts.isIdentifier(p.name)) return p.name.text
  }
  return '(anonymous)'
}

function longFunctions(path) {
  const text = readFileSync(path, 'utf8')
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const out = []
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line
      const last = sf.getLineAndCharacterOfPosition(node.end).line
      const lines = last - first + 1
      if (lines > MAX_FUNCTION) out.push({name: nameOf(node), line: first + 1, lines})
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

let bad = 0
for (const path of files(join(ROOT, 'src'))) {
  const rel = relative(ROOT, path)
  const n = readFileSync(path, 'utf8').split('\n').length - 1
  if (rel.startsWith('src/commands/') && n > MAX_COMMAND) {
    console.log(`${rel}: ${n} lines (a command file has at most ${MAX_COMMAND})`)
    bad++
  }
  for (const f of longFunctions(path)) {
    if (EXCEPTIONS.has(`${rel}:${f.name}`)) continue
    console.log(`${rel}:${f.line}: ${f.name} is ${f.lines} lines (at most ${MAX_FUNCTION})`)
    bad++
  }
}
console.log(bad ? `${bad} over the size rules` : 'sizes: every command file ≤ 120 lines, every function ≤ 40')
process.exit(bad ? 1 : 0)
