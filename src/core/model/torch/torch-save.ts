import type {HostTensor} from '../safetensors.js'
import {STORAGE_DTYPES, type TorchDtype} from './pickle.js'
import {type ZipInput, writeZip} from './zip-write.js'

/**
 * `pytorch_model.bin` in torch.save's zip format (torch ≥ 1.6; torch/serialization.py
 * `_save`): `archive/data.pkl`, a protocol-2 pickle of an OrderedDict whose tensors are
 * `torch._utils._rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict())` with each
 * storage a persistent id ('storage', torch.<Type>Storage, key, 'cpu', numel), the storages
 * as `archive/data/<key>`, and `archive/version`.
 */
const STORAGE_OF = Object.fromEntries(Object.entries(STORAGE_DTYPES).map(([k, v]) => [v, k])) as Record<TorchDtype, string>
const ITEM: Record<TorchDtype, number> = {F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1}

/** Pickle opcodes, protocol 2 (CPython Lib/pickletools.py). */
class PickleWriter {
  private readonly parts: number[] = []

  op(...bytes: number[]): this {
    for (const b of bytes) this.parts.push(b)
    return this
  }

  raw(b: Uint8Array): this {
    for (const x of b) this.parts.push(x)
    return this
  }

  global(module: string, name: string): this {
    return this.op(0x63).raw(new TextEncoder().encode(`${module}\n${name}\n`)) // GLOBAL
  }

  str(s: string): this {
    const b = new TextEncoder().encode(s)
    const n = new Uint8Array(4)
    new DataView(n.buffer).setUint32(0, b.length, true)
    return this.op(0x58).raw(n).raw(b) // BINUNICODE
  }

  int(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw new Error(`pickle: integer ${v} out of range`)
    const n = new Uint8Array(4)
    new DataView(n.buffer).setInt32(0, v, true)
    return this.op(0x4a).raw(n) // BININT
  }

  tuple(items: number[]): this {
    this.op(0x28) // MARK
    for (const v of items) this.int(v)
    return this.op(0x74) // TUPLE
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.parts)
  }
}

/** Row-major strides of a contiguous tensor. */
const strides = (shape: number[]): number[] => shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1))

/** data.pkl of an OrderedDict name → tensor, storage i holding tensor i. */
export function statePickle(tensors: [string, HostTensor][]): Uint8Array {
  const w = new PickleWriter().op(0x80, 2).global('collections', 'OrderedDict').op(0x29, 0x52, 0x28) // PROTO 2; OrderedDict(); MARK
  tensors.forEach(([name, t], i) => {
    const numel = t.shape.reduce((a, b) => a * b, 1)
    w.str(name).global('torch._utils', '_rebuild_tensor_v2').op(0x28) // MARK
    w.op(0x28).str('storage').global('torch', STORAGE_OF[t.dtype]).str(String(i)).str('cpu').int(numel).op(0x74, 0x51) // (…) TUPLE BINPERSID
    w.int(0).tuple(t.shape).tuple(strides(t.shape)).op(0x89) // offset, size, stride, requires_grad False
    w.global('collections', 'OrderedDict').op(0x29, 0x52) // backward_hooks: OrderedDict()
    w.op(0x74, 0x52) // TUPLE REDUCE
  })
  return w.op(0x75, 0x2e).bytes() // SETITEMS STOP
}

/** Writes the tensors as a torch.save zip archive that torch.load reads. */
export async function writeTorchFile(path: string, tensors: [string, HostTensor][]): Promise<void> {
  for (const [name, t] of tensors) {
    if (t.bytes.byteLength !== t.shape.reduce((a, b) => a * b, 1) * ITEM[t.dtype]) throw new Error(`tensor "${name}": byte size does not match its shape`)
  }
  const entries: ZipInput[] = [
    {name: 'archive/data.pkl', data: statePickle(tensors)},
    ...tensors.map(([, t], i) => ({name: `archive/data/${i}`, data: t.bytes})),
    {name: 'archive/version', data: new TextEncoder().encode('3\n')},
  ]
  await writeZip(path, entries)
}
