#!/usr/bin/env node
// Import cycles in src/: reads every .ts file's static imports and re-exports (relative paths
// only) as the compiled JavaScript keeps them (`import type` / `export type` are erased, so they
// are left out; `import {a, type B}` keeps the edge), finds the strongly
// connected components of the module graph (Tarjan), and exits 1 printing each cycle found.
// With --areas it also prints the graph between src/core/<area> folders (for reading, not failing).
// Run by `npm run lint`; no build needed.
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'

const root = resolve(import.meta.dirname, '..')
const src = join(root, 'src')

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return files(p)
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : []
  })
}

const IMPORT = /^\s*(?:import|export)\s(?!type\s)[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm

/** The files a module imports, resolved from `./x.js` to `./x.ts`. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8')
  const out = new Set()
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'))
    out.add(target)
  }
  return [...out]
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

const graph = new Map(files(src).map((f) => [f, importsOf(f)]))
const name = (f) => relative(root, f)
const sccs = cycles(graph)

if (process.argv.includes('--areas')) {
  const area = (f) => {
    const r = relative(src, f).split('/')
    return r[0] === 'core' ? `core/${r[1]}` : r.length > 1 ? r[0] : 'src'
  }
  const edges = new Map()
  for (const [f, deps] of graph) {
    for (const d of deps) {
      if (area(f) === area(d)) continue
      const k = `${area(f)} -> ${area(d)}`
      edges.set(k, [...(edges.get(k) ?? []), `${name(f)} -> ${name(d)}`])
    }
  }
  for (const k of [...edges.keys()].sort()) console.log(`${k} (${edges.get(k).length})`)
  const areaGraph = new Map()
  for (const k of edges.keys()) {
    const [a, b] = k.split(' -> ')
    areaGraph.set(a, [...(areaGraph.get(a) ?? []), b])
    if (!areaGraph.has(b)) areaGraph.set(b, [])
  }
  for (const scc of cycles(areaGraph)) console.log(`area cycle: ${scc.join(', ')}`)
}

if (sccs.length === 0) {
  console.log(`import-cycles: no cycle among ${graph.size} modules of src/`)
} else {
  for (const scc of sccs) console.error(`import cycle: ${scc.map(name).sort().join(' <-> ')}`)
  process.exit(1)
}
