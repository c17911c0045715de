/**
 * The cases on which the cuBLASLt stand-in (native/cuda/standin/cublaslt/) is held to cuBLASLt's
 * documented semantics, shared by its test (test/native/cuda/cublaslt-standin.test.ts) and by
 * tools/make-cublaslt-cases.ts, which saves them with the stand-in's outputs as
 * fixtures/cuda/cublaslt-cases.json for tools/compare-cublaslt-cases.py to run the real
 * cuBLASLt on, on a GPU. A case is the text lt-run reads (lt-run.cc: inputs by seed, so the
 * text alone is the case); `reference` computes what cublasLt.h says the outputs are, in double,
 * from the inputs lt-run wrote back: written from the header's definitions, not from the C++.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

const ROOT = join(import.meta.dirname, '..')
export const STANDIN_DIR = join(ROOT, 'native', 'cuda', 'standin', 'cublaslt')

/** cublasLt.h / library_types.h values (checked against the headers by tools/check-cuda-abi.sh via abi.h). */
export const T = {f32: 0, bf16: 14} as const
export const COMPUTE = {f32: 68, fast16bf: 75, tf32: 77} as const
export const STATUS = {ok: 0, notInitialized: 1, invalid: 7, notSupported: 15} as const
export const EPI = {
  DEFAULT: 1,
  RELU: 2,
  RELU_AUX: 130,
  BIAS: 4,
  RELU_BIAS: 6,
  GELU: 32,
  GELU_AUX: 160,
  GELU_BIAS: 36,
  GELU_AUX_BIAS: 164,
  DGELU: 192,
  DGELU_BGRAD: 208,
  BGRADA: 256,
  BGRADB: 512,
} as const

/** One matrix: its type, rows, cols, ld, batch count and stride (elements). */
export interface Mat {
  type: number
  rows: number
  cols: number
  ld: number
  batch: number
  stride: number
  order?: number
}

/** One cublasLtMatmul: layouts, attributes, scalars and how each buffer is filled. */
export interface LtCase {
  name: string
  compute: number
  scale?: number
  transa: boolean
  transb: boolean
  epilogue: number
  A: Mat
  B: Mat
  C: Mat
  D: Mat
  alpha: number
  beta: number
  /** lt-run fill lines, e.g. 'fill A 0 24 1'; D is filled with a sentinel unless given */
  fills: string[]
  /** other lines: attr …, rawattr …, alias, noalgo */
  extra?: string[]
  /** bias / aux buffers and their attributes (lengths in elements of D's type) */
  biasLen?: number
  biasBatchStride?: number
  auxLd?: number
  auxBatchStride?: number
  auxLen?: number
  /** expected statuses: [heuristic, matmul]; default success */
  expect?: [number, number]
}

/** What fills D, bias and aux before the call (exact in bf16 too): what the call must not touch keeps it. */
export const SENTINEL = 12288

/** Elements a batched matrix spans: ld·(cols − 1) + rows past the last batch's start. */
export const span = (m: Mat): number => (m.batch - 1) * m.stride + m.ld * Math.max(m.cols - 1, 0) + m.rows

const layoutLine = (x: string, m: Mat): string =>
  `layout ${x} ${m.type} ${m.rows} ${m.cols} ${m.ld} ${m.batch} ${m.stride}${m.order === undefined ? '' : ` ${m.order}`}`

/** The case file lt-run reads. */
export function caseText(c: LtCase): string {
  const lines = [`desc ${c.compute} ${c.scale ?? T.f32}`, `attr TRANSA ${c.transa ? 1 : 0}`, `attr TRANSB ${c.transb ? 1 : 0}`, `attr EPILOGUE ${c.epilogue}`]
  if (c.biasBatchStride !== undefined) lines.push(`attr BIAS_BATCH_STRIDE ${c.biasBatchStride}`)
  if (c.auxLd !== undefined) lines.push(`attr EPILOGUE_AUX_LD ${c.auxLd}`)
  if (c.auxBatchStride !== undefined) lines.push(`attr EPILOGUE_AUX_BATCH_STRIDE ${c.auxBatchStride}`)
  // spread-ok: four layouts
  lines.push(...(['A', 'B', 'C', 'D'] as const).map((x) => layoutLine(x, c[x])))
  // spread-ok: a case's few fill lines
  lines.push(...c.fills)
  if (!c.fills.some((f) => f.split(' ')[1] === 'D')) lines.push(`const D ${c.D.type} ${span(c.D)} ${SENTINEL}`)
  if (c.biasLen !== undefined && !c.fills.some((f) => f.split(' ')[1] === 'bias')) lines.push(`const bias ${c.D.type} ${c.biasLen} ${SENTINEL}`)
  if (c.auxLen !== undefined && !c.fills.some((f) => f.split(' ')[1] === 'aux')) lines.push(`const aux ${c.D.type} ${c.auxLen} ${SENTINEL}`)
  // spread-ok: a case's few extra lines
  lines.push(`alpha ${c.alpha}`, `beta ${c.beta}`, ...(c.extra ?? []))
  return `${lines.join('\n')}\n`
}

/** A buffer lt-run wrote back, as numbers, and its raw bytes. */
export interface Buf {
  type: number
  values: Float64Array
  bytes: Buffer
}

export interface LtResult {
  heuristic: number
  status: number
  /** every buffer after the call, and before it */
  bufs: Record<string, Buf>
  inputs: Record<string, Buf>
  /** lt-run's output (attributes the library refused: "attr A status S") */
  stdout: string
}

const bf16ToNumber = (h: number): number => new Float32Array(new Uint32Array([h << 16]).buffer)[0]

export function decode(type: number, bytes: Buffer): Float64Array {
  const n = bytes.length / (type === T.bf16 ? 2 : 4)
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) out[i] = type === T.bf16 ? bf16ToNumber(bytes.readUInt16LE(2 * i)) : bytes.readFloatLE(4 * i)
  return out
}

/** Builds lt-run (the harness) and the stand-in library into `dir`; returns their paths. */
export function buildStandin(dir: string): {lib: string; ltRun: string} {
  mkdirSync(dir, {recursive: true})
  const b = spawnSync(process.execPath, [join(STANDIN_DIR, 'build.mjs'), dir], {encoding: 'utf8'})
  if (b.status !== 0) throw new Error(`cublasLt stand-in build failed: ${b.stderr}`)
  const ltRun = join(dir, 'lt-run')
  const r = spawnSync(process.env.CXX ?? 'g++', ['-std=c++17', '-O1', '-o', ltRun, join(STANDIN_DIR, 'lt-run.cc'), '-ldl'], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`lt-run build failed: ${r.stderr}`)
  return {lib: b.stdout.trim().split('\n').pop() as string, ltRun}
}

/** The type of each buffer lt-run writes back. */
function bufTypes(c: LtCase): Record<string, number> {
  return {A: c.A.type, B: c.B.type, C: c.C.type, D: c.D.type, bias: c.D.type, aux: c.D.type}
}

/** Runs one case with lt-run against `lib`. */
export function runCase(ltRun: string, lib: string, c: LtCase): LtResult {
  const dir = mkdtempSync(join(tmpdir(), 'span-lt-'))
  writeFileSync(join(dir, 'case.txt'), caseText(c))
  const r = spawnSync(ltRun, [lib, join(dir, 'case.txt'), dir], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`lt-run ${c.name}: ${r.stderr}`)
  const heuristic = Number(/^heuristic (-?\d+)/m.exec(r.stdout)?.[1])
  const status = Number(/^matmul (-?\d+)/m.exec(r.stdout)?.[1])
  const read = (suffix: string): Record<string, Buf> => {
    const out: Record<string, Buf> = {}
    for (const [name, type] of Object.entries(bufTypes(c))) {
      const file = join(dir, `${name}${suffix}`)
      if (!existsSync(file)) continue
      const bytes = readFileSync(file)
      out[name] = {type, values: decode(type, bytes), bytes}
    }
    return out
  }
  return {heuristic, status, bufs: read('.bin'), inputs: read('.in.bin'), stdout: r.stdout}
}
