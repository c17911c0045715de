import {SpanError} from '../../stream/errors.js'

/**
 * A restricted unpickler for what torch.save writes of a state dict (pickle protocols 2–5,
 * opcodes as in CPython's Lib/pickletools.py). It calls nothing: the only globals it
 * accepts are the ones a state dict names (`allowedGlobal`), and they build plain values
 * (Map, PickledTensor); any other global is refused in one line, naming it. Persistent ids
 * (torch's storages) are handed to `persistentLoad`.
 */
export interface PickledGlobal {
  kind: 'global'
  module: string
  name: string
}

/** The storage a tensor views, as torch's persistent id names it. */
export interface PickledStorage {
  kind: 'storage'
  dtype: TorchDtype
  key: string
  numel: number
  /** legacy view metadata: the tensor's storage is a slice of the root storage from this element */
  viewOffset: number
}

export interface PickledTensor {
  kind: 'tensor'
  storage: PickledStorage
  offset: number
  size: number[]
  stride: number[]
}

export type TorchDtype = 'F32' | 'F16' | 'BF16' | 'F64' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL'

/** torch's typed storage classes and the dtype each holds. */
export const STORAGE_DTYPES: Record<string, TorchDtype> = {
  FloatStorage: 'F32',
  HalfStorage: 'F16',
  BFloat16Storage: 'BF16',
  DoubleStorage: 'F64',
  LongStorage: 'I64',
  IntStorage: 'I32',
  ShortStorage: 'I16',
  CharStorage: 'I8',
  ByteStorage: 'U8',
  BoolStorage: 'BOOL',
}

const ALLOWED = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  ...Object.keys(STORAGE_DTYPES).map((s) => `torch.${s}`),
])

/** Refuses every global a state dict does not need (os.system, builtins.eval, …). */
export function allowedGlobal(module: string, name: string, source: string): PickledGlobal {
  if (!ALLOWED.has(`${module}.${name}`)) {
    throw new SpanError(
      `${source}: refusing to load global "${module}.${name}" (a state dict needs only tensors, storages and OrderedDict; this file may run code)`,
    )
  }
  return {kind: 'global', module, name}
}

/**
 * A pickle that ends before its STOP: the message is the same as any refusal's, the class lets a
 * reader that parsed a prefix of a file (the legacy stream's header pickles) read more and try again.
 */
export class TruncatedPickle extends SpanError {}

const MARK = Symbol('mark')
type Value = unknown

/**
 * How deeply containers may nest. A state dict is a few levels deep (dict → tensor → its
 * argument tuple → a storage id); the walkers over the unpickled value recurse, and a crafted
 * pickle nested 100,000 deep overflowed the call stack. Refused by name past this.
 */
export const MAX_PICKLE_DEPTH = 100

/** Reads one pickle from buf starting at `start`; returns the object and the position after STOP. */
export function unpickle(buf: Uint8Array, start: number, source: string, persistentLoad: (pid: Value) => Value): {value: Value; end: number} {
  const r = new Reader(buf, start, source)
  const stack: Value[] = []
  const m: Machine = {r, stack, memo: new Map(), persistentLoad, push: (v) => void stack.push(v), nest: new Nesting(r)}
  for (;;) {
    const op = r.u8()
    if (op === 0x2e) return {value: stack.pop(), end: r.pos} // STOP
    const handler = OPS[op]
    if (!handler) r.fail(`opcode 0x${op.toString(16)} is not allowed in a checkpoint`)
    handler(m)
  }
}

class Reader {
  pos: number
  private readonly dv: DataView
  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly source: string,
  ) {
    this.pos = start
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }

  fail(m: string, As = SpanError): never {
    throw new As(`${this.source}: pickle at byte ${this.pos}: ${m}`)
  }

  need(n: number): number {
    if (this.pos + n > this.buf.byteLength) this.fail('truncated pickle', TruncatedPickle)
    const p = this.pos
    this.pos += n
    return p
  }

  u8 = (): number => this.buf[this.need(1)]
  u16 = (): number => this.dv.getUint16(this.need(2), true)
  u32 = (): number => this.dv.getUint32(this.need(4), true)
  i32 = (): number => this.dv.getInt32(this.need(4), true)
  u64 = (): number => Number(this.dv.getBigUint64(this.need(8), true))
  f64 = (): number => this.dv.getFloat64(this.need(8), false)
  bytes = (n: number): Uint8Array => this.buf.subarray(this.need(n), this.pos)
  str = (n: number): string => new TextDecoder().decode(this.bytes(n))

  /** A text line (protocol 0 arguments), without its newline. */
  line(): string {
    const end = this.buf.indexOf(0x0a, this.pos)
    if (end < 0) this.fail('truncated pickle', TruncatedPickle)
    const s = new TextDecoder('latin1').decode(this.buf.subarray(this.pos, end))
    this.pos = end + 1
    return s
  }

  /** LONG1/LONG4: a little-endian two's-complement integer of n bytes (a bigint past 2^53). */
  long(n: number): number | bigint {
    const b = this.bytes(n)
    let v = 0n
    for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
    if (n > 0 && b[n - 1] & 0x80) v -= 1n << BigInt(8 * n)
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v
  }
}

/**
 * The depth of every container, exact because a container is sealed once it is put inside
 * another (or handed to REDUCE or a persistent id): torch.save fills each container before
 * nesting it, and changing a sealed one (what a self-referencing pickle does) is refused.
 */
class Nesting {
  private readonly depth = new WeakMap<object, number>()
  private readonly sealed = new WeakSet<object>()
  constructor(private readonly r: Reader) {}

  /** Seals `items` (about to be nested) and returns 1 + their deepest depth. */
  private above(items: Value[]): number {
    let d = 0
    for (const v of items) {
      if (v === null || typeof v !== 'object') continue
      this.sealed.add(v)
      d = Math.max(d, this.depth.get(v) ?? 1)
    }
    return d + 1
  }

  /** A new container holding `items`. */
  made<T extends object>(container: T, items: Value[]): T {
    this.set(container, this.above(items))
    return container
  }

  /** `items` put into the existing container `target`. */
  into(target: Value, items: Value[]): void {
    const d = this.above(items)
    if (target !== null && typeof target === 'object') {
      if (this.sealed.has(target)) this.r.fail('a container changed after it was nested (a self-referencing or crafted pickle; torch.save never writes one)')
      this.set(target, Math.max(this.depth.get(target) ?? 1, d))
    }
  }

  private set(v: object, d: number): void {
    if (d > MAX_PICKLE_DEPTH) this.r.fail(`containers nested more than ${MAX_PICKLE_DEPTH} deep (a state dict is a few levels deep)`)
    this.depth.set(v, d)
  }
}

/** Pops the items above the topmost mark, and the mark. */
function popMark(stack: Value[], r: Reader): Value[] {
  const i = stack.lastIndexOf(MARK)
  if (i < 0) r.fail('no MARK on the stack')
  const items = stack.slice(i + 1)
  stack.length = i
  return items
}

function top(stack: Value[], r: Reader): Value {
  if (stack.length === 0) r.fail('stack underflow')
  return stack[stack.length - 1]
}

function pop(stack: Value[], r: Reader): Value {
  if (stack.length === 0) r.fail('stack underflow')
  return stack.pop()
}

function setItems(m: Machine, target: Value, items: Value[]): void {
  if (!(target instanceof Map)) m.r.fail('SETITEM(S) on something that is not a dict')
  m.nest.into(target, items)
  for (let i = 0; i + 1 < items.length; i += 2) (target as Map<Value, Value>).set(items[i], items[i + 1])
}

function appendItems(m: Machine, target: Value, items: Value[]): void {
  if (!Array.isArray(target)) m.r.fail('APPEND(S) on something that is not a list')
  m.nest.into(target, items)
  for (const v of items) (target as Value[]).push(v) // no push(...items): a million items would overflow the call stack
}

/** A tuple or list of `items`, its depth recorded. */
const seq = (m: Machine, items: Value[]): Value[] => m.nest.made(items, items)

interface Machine {
  r: Reader
  stack: Value[]
  memo: Map<number, Value>
  persistentLoad: (pid: Value) => Value
  push: (v: Value) => void
  nest: Nesting
}

/** One handler per allowed opcode; anything else is refused. */
const OPS: Record<number, (m: Machine) => void> = {
  0x80: (m) => {
    m.r.u8()
  }, // PROTO
  0x95: (m) => {
    m.r.u64()
  }, // FRAME
  0x28: (m) => {
    m.push(MARK)
  }, // MARK
  0x7d: (m) => {
    m.push(new Map())
  }, // EMPTY_DICT
  0x5d: (m) => {
    m.push([])
  }, // EMPTY_LIST, EMPTY_SET
  0x8f: (m) => {
    m.push([])
  }, // EMPTY_LIST, EMPTY_SET
  0x29: (m) => {
    m.push([])
  }, // EMPTY_TUPLE
  0x4e: (m) => {
    m.push(null)
  }, // NONE
  0x88: (m) => {
    m.push(true)
  }, // NEWTRUE
  0x89: (m) => {
    m.push(false)
  }, // NEWFALSE
  0x4b: (m) => {
    m.push(m.r.u8())
  }, // BININT1
  0x4d: (m) => {
    m.push(m.r.u16())
  }, // BININT2
  0x4a: (m) => {
    m.push(m.r.i32())
  }, // BININT
  0x8a: (m) => {
    m.push(m.r.long(m.r.u8()))
  }, // LONG1
  0x8b: (m) => {
    m.push(m.r.long(m.r.u32()))
  }, // LONG4
  0x49: (m) => {
    m.push(parseInt(m.r.line(), 10))
  }, // INT, LONG (text)
  0x4c: (m) => {
    m.push(parseInt(m.r.line(), 10))
  }, // INT, LONG (text)
  0x47: (m) => {
    m.push(m.r.f64())
  }, // BINFLOAT
  0x58: (m) => {
    m.push(m.r.str(m.r.u32()))
  }, // BINUNICODE
  0x8c: (m) => {
    m.push(m.r.str(m.r.u8()))
  }, // SHORT_BINUNICODE
  0x8d: (m) => {
    m.push(m.r.str(m.r.u64()))
  }, // BINUNICODE8
  0x54: (m) => {
    m.push(m.r.str(m.r.u32()))
  }, // BINSTRING
  0x55: (m) => {
    m.push(m.r.str(m.r.u8()))
  }, // SHORT_BINSTRING
  0x42: (m) => {
    m.push(m.r.bytes(m.r.u32()))
  }, // BINBYTES
  0x43: (m) => {
    m.push(m.r.bytes(m.r.u8()))
  }, // SHORT_BINBYTES
  0x8e: (m) => {
    m.push(m.r.bytes(m.r.u64()))
  }, // BINBYTES8
  0x74: (m) => {
    m.push(seq(m, popMark(m.stack, m.r)))
  }, // TUPLE, LIST
  0x6c: (m) => {
    m.push(seq(m, popMark(m.stack, m.r)))
  }, // TUPLE, LIST
  0x85: (m) => {
    m.push(seq(m, [pop(m.stack, m.r)]))
  }, // TUPLE1
  0x86: (m) => {
    const b = pop(m.stack, m.r)
    m.push(seq(m, [pop(m.stack, m.r), b]))
  }, // TUPLE2
  0x87: (m) => {
    const c = pop(m.stack, m.r)
    const b = pop(m.stack, m.r)
    m.push(seq(m, [pop(m.stack, m.r), b, c]))
  }, // TUPLE3
  0x64: (m) => {
    const d = new Map()
    setItems(m, d, popMark(m.stack, m.r))
    m.push(d)
  }, // DICT
  0x61: (m) => {
    const v = pop(m.stack, m.r)
    appendItems(m, top(m.stack, m.r), [v])
  }, // APPEND
  0x65: (m) => {
    const items = popMark(m.stack, m.r)
    appendItems(m, top(m.stack, m.r), items)
  }, // APPENDS
  0x73: (m) => {
    const v = pop(m.stack, m.r)
    const k = pop(m.stack, m.r)
    setItems(m, top(m.stack, m.r), [k, v])
  }, // SETITEM
  0x75: (m) => {
    const items = popMark(m.stack, m.r)
    setItems(m, top(m.stack, m.r), items)
  }, // SETITEMS
  0x71: (m) => {
    m.memo.set(m.r.u8(), top(m.stack, m.r))
  }, // BINPUT
  0x72: (m) => {
    m.memo.set(m.r.u32(), top(m.stack, m.r))
  }, // LONG_BINPUT
  0x70: (m) => {
    m.memo.set(parseInt(m.r.line(), 10), top(m.stack, m.r))
  }, // PUT
  0x94: (m) => {
    m.memo.set(m.memo.size, top(m.stack, m.r))
  }, // MEMOIZE
  0x68: (m) => {
    m.push(memoGet(m.memo, m.r.u8(), m.r))
  }, // BINGET
  0x6a: (m) => {
    m.push(memoGet(m.memo, m.r.u32(), m.r))
  }, // LONG_BINGET
  0x67: (m) => {
    m.push(memoGet(m.memo, parseInt(m.r.line(), 10), m.r))
  }, // GET
  0x30: (m) => {
    pop(m.stack, m.r)
  }, // POP
  0x31: (m) => {
    popMark(m.stack, m.r)
  }, // POP_MARK
  0x32: (m) => {
    m.push(top(m.stack, m.r))
  }, // DUP
  0x63: (m) => {
    const module = m.r.line()
    m.push(allowedGlobal(module, m.r.line(), m.r.source))
  }, // GLOBAL
  0x93: (m) => {
    const name = pop(m.stack, m.r)
    const module = pop(m.stack, m.r)
    if (typeof module !== 'string' || typeof name !== 'string') m.r.fail('STACK_GLOBAL of something that is not a module and name')
    m.push(allowedGlobal(module as string, name as string, m.r.source))
  }, // STACK_GLOBAL
  0x51: (m) => {
    const pid = pop(m.stack, m.r)
    m.nest.made({}, [pid]) // seals the id
    m.push(m.persistentLoad(pid))
  }, // BINPERSID
  0x50: (m) => {
    m.push(m.persistentLoad(m.r.line()))
  }, // PERSID
  0x52: (m) => {
    const args = pop(m.stack, m.r)
    const fn = pop(m.stack, m.r)
    const made = call(fn, args, m.r)
    m.push(made !== null && typeof made === 'object' ? m.nest.made(made, [args]) : made)
  }, // REDUCE
  0x62: (m) => {
    pop(m.stack, m.r)
    top(m.stack, m.r)
  }, // BUILD: state (OrderedDict._metadata) is dropped
}

function memoGet(memo: Map<number, Value>, k: number, r: Reader): Value {
  if (!memo.has(k)) r.fail(`memo key ${k} was never stored`)
  return memo.get(k)
}

/** What REDUCE builds from an allowed global: an OrderedDict (Map) or a tensor; nothing is ever executed. */
function call(fn: Value, args: Value, r: Reader): Value {
  const g = fn as PickledGlobal
  if (g?.kind !== 'global' || !Array.isArray(args)) return r.fail('REDUCE of something that is not an allowed global')
  const full = `${g.module}.${g.name}`
  if (full === 'collections.OrderedDict') {
    const m = new Map<Value, Value>()
    for (const kv of (args[0] ?? []) as Value[][]) m.set(kv[0], kv[1])
    return m
  }
  if (full === 'torch._utils._rebuild_parameter') return args[0]
  if (full === 'torch._utils._rebuild_tensor_v2') return rebuildTensor(args, r)
  return r.fail(`"${full}" cannot be called`)
}

const isInts = (v: Value): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0)

/** `_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, …)`. */
function rebuildTensor(args: Value[], r: Reader): PickledTensor {
  const [storage, offset, size, stride] = args
  if ((storage as PickledStorage)?.kind !== 'storage') r.fail('_rebuild_tensor_v2 without a storage')
  if (!Number.isInteger(offset) || (offset as number) < 0 || !isInts(size) || !isInts(stride) || size.length !== stride.length) {
    r.fail('_rebuild_tensor_v2 with a bad offset, size or stride')
  }
  return {kind: 'tensor', storage: storage as PickledStorage, offset: offset as number, size: size as number[], stride: stride as number[]}
}
