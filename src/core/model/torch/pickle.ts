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
  FloatStorage: 'F32', HalfStorage: 'F16', BFloat16Storage: 'BF16', DoubleStorage: 'F64', LongStorage: 'I64',
  IntStorage: 'I32', ShortStorage: 'I16', CharStorage: 'I8', ByteStorage: 'U8', BoolStorage: 'BOOL',
}

const ALLOWED = new Set(['collections.OrderedDict', 'torch._utils._rebuild_tensor_v2', 'torch._utils._rebuild_parameter',
  ...Object.keys(STORAGE_DTYPES).map((s) => `torch.${s}`)])

/** Refuses every global a state dict does not need (os.system, builtins.eval, …). */
export function allowedGlobal(module: string, name: string, source: string): PickledGlobal {
  if (!ALLOWED.has(`${module}.${name}`)) {
    throw new SpanError(`${source}: refusing to load global "${module}.${name}" (a state dict needs only tensors, storages and OrderedDict; this file may run code)`)
  }
  return {kind: 'global', module, name}
}

const MARK = Symbol('mark')
type Value = unknown

/** Reads one pickle from buf starting at `start`; returns the object and the position after STOP. */
export function unpickle(buf: Uint8Array, start: number, source: string, persistentLoad: (pid: Value) => Value): {value: Value; end: number} {
  const r = new Reader(buf, start, source)
  const stack: Value[] = []
  const memo = new Map<number, Value>()
  for (;;) {
    const op = r.u8()
    if (op === 0x2e) return {value: stack.pop(), end: r.pos} // STOP
    step(op, r, stack, memo, persistentLoad)
  }
}

class Reader {
  pos: number
  private readonly dv: DataView
  constructor(readonly buf: Uint8Array, start: number, readonly source: string) {
    this.pos = start
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }

  fail(m: string): never {
    throw new SpanError(`${this.source}: pickle at byte ${this.pos}: ${m}`)
  }

  need(n: number): number {
    if (this.pos + n > this.buf.byteLength) this.fail('truncated pickle')
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
    if (end < 0) this.fail('truncated pickle')
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

function setItems(target: Value, items: Value[], r: Reader): void {
  if (!(target instanceof Map)) r.fail('SETITEM(S) on something that is not a dict')
  for (let i = 0; i + 1 < items.length; i += 2) (target as Map<Value, Value>).set(items[i], items[i + 1])
}

function appendItems(target: Value, items: Value[], r: Reader): void {
  if (!Array.isArray(target)) r.fail('APPEND(S) on something that is not a list')
  ;(target as Value[]).push(...items)
}

/** Pushes the result of one opcode (data, containers, memo) or hands it to `call` (globals). */
function step(op: number, r: Reader, stack: Value[], memo: Map<number, Value>, persistentLoad: (pid: Value) => Value): void {
  const push = (v: Value): void => void stack.push(v)
  switch (op) {
    case 0x80: r.u8(); return // PROTO
    case 0x95: r.u64(); return // FRAME
    case 0x28: return push(MARK) // MARK
    case 0x7d: return push(new Map()) // EMPTY_DICT
    case 0x5d: case 0x8f: return push([]) // EMPTY_LIST, EMPTY_SET
    case 0x29: return push([]) // EMPTY_TUPLE
    case 0x4e: return push(null) // NONE
    case 0x88: return push(true) // NEWTRUE
    case 0x89: return push(false) // NEWFALSE
    case 0x4b: return push(r.u8()) // BININT1
    case 0x4d: return push(r.u16()) // BININT2
    case 0x4a: return push(r.i32()) // BININT
    case 0x8a: return push(r.long(r.u8())) // LONG1
    case 0x8b: return push(r.long(r.u32())) // LONG4
    case 0x49: case 0x4c: return push(parseInt(r.line(), 10)) // INT, LONG (text)
    case 0x47: return push(r.f64()) // BINFLOAT
    case 0x58: return push(r.str(r.u32())) // BINUNICODE
    case 0x8c: return push(r.str(r.u8())) // SHORT_BINUNICODE
    case 0x8d: return push(r.str(r.u64())) // BINUNICODE8
    case 0x54: return push(r.str(r.u32())) // BINSTRING
    case 0x55: return push(r.str(r.u8())) // SHORT_BINSTRING
    case 0x42: return push(r.bytes(r.u32())) // BINBYTES
    case 0x43: return push(r.bytes(r.u8())) // SHORT_BINBYTES
    case 0x8e: return push(r.bytes(r.u64())) // BINBYTES8
    case 0x74: case 0x6c: return push(popMark(stack, r)) // TUPLE, LIST
    case 0x85: return push([pop(stack, r)]) // TUPLE1
    case 0x86: { const b = pop(stack, r); return push([pop(stack, r), b]) } // TUPLE2
    case 0x87: { const c = pop(stack, r); const b = pop(stack, r); return push([pop(stack, r), b, c]) } // TUPLE3
    case 0x64: { const m = new Map(); setItems(m, popMark(stack, r), r); return push(m) } // DICT
    case 0x61: { const v = pop(stack, r); return appendItems(top(stack, r), [v], r) } // APPEND
    case 0x65: { const items = popMark(stack, r); return appendItems(top(stack, r), items, r) } // APPENDS
    case 0x73: { const v = pop(stack, r); const k = pop(stack, r); return setItems(top(stack, r), [k, v], r) } // SETITEM
    case 0x75: { const items = popMark(stack, r); return setItems(top(stack, r), items, r) } // SETITEMS
    case 0x71: memo.set(r.u8(), top(stack, r)); return // BINPUT
    case 0x72: memo.set(r.u32(), top(stack, r)); return // LONG_BINPUT
    case 0x70: memo.set(parseInt(r.line(), 10), top(stack, r)); return // PUT
    case 0x94: memo.set(memo.size, top(stack, r)); return // MEMOIZE
    case 0x68: return push(memoGet(memo, r.u8(), r)) // BINGET
    case 0x6a: return push(memoGet(memo, r.u32(), r)) // LONG_BINGET
    case 0x67: return push(memoGet(memo, parseInt(r.line(), 10), r)) // GET
    case 0x30: pop(stack, r); return // POP
    case 0x31: popMark(stack, r); return // POP_MARK
    case 0x32: return push(top(stack, r)) // DUP
    case 0x63: { const module = r.line(); return push(allowedGlobal(module, r.line(), r.source)) } // GLOBAL
    case 0x93: { const name = pop(stack, r); const module = pop(stack, r); return push(allowedGlobal(String(module), String(name), r.source)) } // STACK_GLOBAL
    case 0x51: return push(persistentLoad(pop(stack, r))) // BINPERSID
    case 0x50: return push(persistentLoad(r.line())) // PERSID
    case 0x52: { const args = pop(stack, r); return push(call(pop(stack, r), args, r)) } // REDUCE
    case 0x62: pop(stack, r); top(stack, r); return // BUILD: state (OrderedDict._metadata) is dropped
    default: r.fail(`opcode 0x${op.toString(16)} is not allowed in a checkpoint`)
  }
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
