#!/usr/bin/env node
// The import rules of src/ (run by `npm run lint`; no build needed); exits 1 printing each offence.
//  1. Layers: a file imports only from its own room or from the rooms tools/layers.mjs lets its
//     room import (docs/architecture.md's table), the rooms' own order is acyclic, and a room
//     marked `tensors: false` imports no @tensorflow package.
//  2. No cycle among files: the strongly connected components (Tarjan) of the module graph.
// Every import counts: `import type` and `export type` too, and dynamic `import('./x.js')`
// (TypeScript's own pre-processor reads them, so comments and strings are passed over). A
// type-only import is erased from the JavaScript, so it cannot break the order modules load in;
// it is still a dependency a reader and the compiler follow: two files that name each other's
// types cannot be read, moved or split alone, and a type that both need belongs in a file of its
// own; an engine file naming a model type stands on the model as surely as one that calls it.
// With --areas it also prints the graph between rooms (for reading, not failing).
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import ts from 'typescript'
import {ROOMS} from './layers.mjs'

const root = resolve(import.meta.dirname, '..')
const src = resolve(root, process.argv.includes('--src') ? process.argv[process.argv.indexOf('--src') + 1] : 'src') // --src: another tree (the tool's test)

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return files(p)
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : []
  })
}

/** A file's imports: {target, line}, relative ones resolved from `./x.js` to the `./x.ts` file, packages by name. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8')
  const lineOf = (pos) => text.slice(0, pos).split('\n').length
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => {
    const spec = f.fileName
    const rel = spec.startsWith('./') || spec.startsWith('../')
    return {target: rel ? resolve(dirname(file), spec.replace(/\.js$/, '.ts')) : spec, package: !rel, line: lineOf(f.pos)}
  })
}

/** Tarjan's strongly connected components; returns those with more than one module (or a self-import). */
function cycles(graph) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const on = new Set()
  const found = []
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const scc = []
      let w
      do {
        w = stack.pop()
        on.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc)
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return found
}

/** The room of a file under src/: `commands`, `cli`, `core/<folder>`; null for anything else. */
function roomOf(file) {
  const r = relative(src, file).split('/')
  if (r[0] === 'core' && r.length > 2) return `core/${r[1]}`
  return r.length > 1 && r[0] !== 'core' && r[0] !== '..' ? r[0] : null
}

const allowed = (from, to) => from === to || ROOMS[from].may.some((m) => m === to || (m.endsWith('/*') && to.startsWith(m.slice(0, -1))))

/** The rooms' own `may` graph must be acyclic (and name only known rooms), or the layers are no order. */
function tableErrors() {
  const errors = []
  const graph = new Map(Object.entries(ROOMS).map(([r]) => [r, Object.keys(ROOMS).filter((o) => o !== r && allowed(r, o))]))
  for (const [r, {may}] of Object.entries(ROOMS))
    for (const m of may) if (!m.endsWith('/*') && !ROOMS[m]) errors.push(`tools/layers.mjs: ${r} may import ${m}, which is no room`)
  for (const scc of cycles(graph)) errors.push(`tools/layers.mjs: the rooms ${scc.sort().join(', ')} may import each other in a circle`)
  return errors
}

/** Each import that leaves its room for one it may not import, and each tensor package in a room without tensors. */
function layerErrors(graph) {
  const errors = []
  for (const [file, deps] of graph) {
    const from = roomOf(file)
    if (from === null || !ROOMS[from]) {
      errors.push(`${name(file)}: in no room of tools/layers.mjs (src/commands, src/cli or a listed src/core folder)`)
      continue
    }
    for (const d of deps) {
      if (d.package) {
        if (ROOMS[from].tensors === false && d.target.startsWith('@tensorflow/'))
          errors.push(`${name(file)}:${d.line}: ${from} holds no tensor code, but imports ${d.target}`)
        continue
      }
      const to = roomOf(d.target)
      if (to === null || !ROOMS[to]) continue // outside src/ (none today) or a file the room check names
      if (!allowed(from, to)) errors.push(`${name(file)}:${d.line}: ${from} may not import ${to} (${name(d.target)}); tools/layers.mjs has the order`)
    }
  }
  return errors
}

const name = (f) => relative(root, f)
const imports = new Map(files(src).map((f) => [f, importsOf(f)]))
const graph = new Map([...imports].map(([f, deps]) => [f, deps.filter((d) => !d.package).map((d) => d.target)]))

if (process.argv.includes('--areas')) {
  const edges = new Map()
  for (const [f, deps] of graph)
    for (const d of deps) {
      const k = `${roomOf(f)} -> ${roomOf(d)}`
      if (roomOf(f) !== roomOf(d)) edges.set(k, [...(edges.get(k) ?? []), `${name(f)} -> ${name(d)}`])
    }
  for (const k of [...edges.keys()].sort()) console.log(`${k} (${edges.get(k).length})`)
}

const errors = [...tableErrors(), ...layerErrors(imports)]
for (const scc of cycles(graph)) errors.push(`import cycle: ${scc.map(name).sort().join(' <-> ')}`)
if (errors.length === 0) {
  console.log(`import-cycles: ${graph.size} modules of src/ in ${Object.keys(ROOMS).length} rooms, every import downward, no cycle`)
} else {
  for (const e of errors) console.error(e)
  process.exit(1)
}
