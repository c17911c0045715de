// What issue 36 (causes 1, 4, 5, 7) adds to the bad-input matrix, run on the matrix's own
// checkpoints: a long coreference document (past the ~120,000 candidate spans whose spread
// overflowed the stack) predicted and scored as dev; a document of no words and empty input files
// for every command that reads a model or a document; inconsistent model files (overlapping
// safetensors ranges, a config.json whose head or layers disagree with the weights) for every
// command that reads a model; a model of another task for every predict command; contradictory
// flags and two stdin inputs for every eval command; a coref split that selects nothing.
import {cpSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

export interface Job36 {
  name: string
  line: string
  check(r: {code: number; stdout: string; stderr: string}): string | null
}

const WORDS = ['john', 'saw', 'the', 'big', 'dog', 'and', 'he', 'liked', 'her', 'very', 'much', 'in', 'the', 'park']

/** A LitBank-layout document of `words` words in sentences of `len`; "john" and "he" one cluster. */
export function longConll(words: number, len: number): string {
  const rows = ['#begin document (long); part 0']
  for (let w = 0; w < words; w++) {
    const i = w % len
    const word = i === len - 1 ? '.' : WORDS[i % WORDS.length]
    rows.push(['long', '0', String(i), word, '_', '_', '_', '_', '_', '_', '_', '_', word === 'john' || word === 'he' ? '(0)' : ''].join('\t'))
    if (i === len - 1 || w === words - 1) rows.push('')
  }
  return rows.join('\n') + '\n#end document\n'
}

/** A copy of checkpoint `from` at `to` with its safetensors header rewritten by `edit` (the data as it was). */
function editHeader(from: string, to: string, edit: (h: Record<string, {data_offsets: number[]}>) => void): void {
  cpSync(from, to, {recursive: true})
  const f = join(to, 'model.safetensors')
  const buf = readFileSync(f)
  const n = Number(buf.readBigUInt64LE(0))
  const header = JSON.parse(buf.subarray(8, 8 + n).toString()) as Record<string, {data_offsets: number[]}>
  edit(header)
  const text = Buffer.from(JSON.stringify(header))
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(text.length))
  writeFileSync(f, Buffer.concat([len, text, buf.subarray(8 + n)]))
}

/** A copy of checkpoint `from` whose weights gain a layer past config.json's num_hidden_layers (a well-formed file). */
function addLayer(from: string, to: string): void {
  cpSync(from, to, {recursive: true})
  const f = join(to, 'model.safetensors')
  const buf = readFileSync(f)
  const n = Number(buf.readBigUInt64LE(0))
  const header = JSON.parse(buf.subarray(8, 8 + n).toString()) as Record<string, {dtype: string; shape: number[]; data_offsets: number[]}>
  const data = buf.subarray(8 + n)
  const extra: Buffer[] = []
  let end = data.length
  for (const k of Object.keys(header).filter((x) => x.includes('encoder.layer.0.'))) {
    const [a, b] = header[k].data_offsets
    header[k.replace('layer.0.', 'layer.1.')] = {...header[k], data_offsets: [end, end + b - a]}
    extra.push(data.subarray(a, b))
    end += b - a
  }
  const text = Buffer.from(JSON.stringify(header))
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(text.length))
  writeFileSync(f, Buffer.concat([len, text, data, ...extra]))
}

/** Two tensors of one size, the later one's range made the earlier one's: the bytes read twice, the later ones by none. */
function overlap(h: Record<string, {data_offsets: number[]}>): void {
  const names = Object.keys(h).filter((k) => k !== '__metadata__')
  const size = (k: string) => h[k].data_offsets[1] - h[k].data_offsets[0]
  names.sort((a, b) => h[a].data_offsets[0] - h[b].data_offsets[0])
  const a = names.find((x, i) => names.slice(i + 1).some((y) => size(y) === size(x))) as string
  const b = names.slice(names.indexOf(a) + 1).find((y) => size(y) === size(a)) as string
  h[b].data_offsets = [...h[a].data_offsets]
}

/** A copy of checkpoint `from` at `to` whose config.json is changed by `edit`. */
function editConfig(from: string, to: string, edit: (c: Record<string, unknown>) => void): void {
  cpSync(from, to, {recursive: true})
  const c = JSON.parse(readFileSync(join(to, 'config.json'), 'utf8')) as Record<string, unknown>
  edit(c)
  writeFileSync(join(to, 'config.json'), JSON.stringify(c, null, 2))
}

const TASKS = ['glue', 'squad', 'ner', 'tacred', 'nli', 'swag', 'mrqa', 'coref']

/** The inputs: written into tmp beside the matrix's checkpoints (pre/, ft-TASK/). */
export function prepare36(tmp: string): void {
  writeFileSync(join(tmp, 'long.conll'), longConll(6000, 200)) // 6,000 words: ~167,000 candidate spans
  writeFileSync(join(tmp, 'nowords.conll'), '#begin document (nowords); part 0\n#end document\n')
  writeFileSync(join(tmp, 'empty-file'), '')
  editHeader(join(tmp, 'pre', 'checkpoint-1'), join(tmp, 'i36-overlap-pre'), overlap)
  for (const t of TASKS) editHeader(join(tmp, `ft-${t}`, 'checkpoint-1'), join(tmp, `i36-overlap-${t}`), overlap)
  editConfig(join(tmp, 'ft-coref', 'checkpoint-1'), join(tmp, 'i36-head-coref'), (c) => {
    const h = c.coref as Record<string, number>
    h.ffnn_size *= 2
  })
  for (const t of ['glue', 'tacred', 'nli', 'ner'])
    editConfig(join(tmp, `ft-${t}`, 'checkpoint-1'), join(tmp, `i36-head-${t}`), (c) => (c.num_labels = Number(c.num_labels) + 1))
  addLayer(join(tmp, 'pre', 'checkpoint-1'), join(tmp, 'i36-layer-pre'))
  mkdirSync(join(tmp, 'gum'), {recursive: true})
  cpSync(join(tmp, 'coref.conll'), join(tmp, 'gum', 'GUM_x.conll'))
  writeFileSync(join(tmp, 'gum', 'splits.md'), '# Splits\n\n## dev\n\n  * GUM_x\n\n## test\n\n  * GUM_absent\n')
}

/** Exit `code` with one `span CMD:` line on stderr (progress and notices of training runs aside) saying `what`. */
function oneLine(cmd: string, code: number, what: RegExp) {
  return (r: {code: number; stderr: string}): string | null => {
    const lines = r.stderr
      .split('\n')
      .filter((l) => l !== '' && !/^[a-z ]+: (from|step) |^span [a-z ]+: (config|model|\d+ |initialised|effective batch|checkpoint|warning)/.test(l))
    if (r.code !== code) return `exit ${r.code}, not ${code}`
    if (lines.length !== 1 || !lines[0].startsWith(`span ${cmd}: `)) return 'not one `span CMD:` line'
    return what.test(lines[0]) ? null : `the line does not say ${what}`
  }
}

const ok = (r: {code: number; stderr: string}) => (r.code === 0 && !/internal error/.test(r.stderr) ? null : `exit ${r.code}`)

/** Exit 0, or exit 1 with one line in span's words: never a crash. */
const handled = (cmd: string) => (r: {code: number; stderr: string}) =>
  r.code === 0 && !/internal error/.test(r.stderr) ? null : oneLine(cmd, 1, /^(?!.*internal error)/)(r)

/** The jobs; `node` runs bin/run.js, `cmds` the matrix's argument lines (IN, OUT to fill in) of the commands that read a model or a document. */
export function jobs36(node: string, cmds: Record<string, {args: string; input: string}>, tmp: string): Job36[] {
  const jobs: Job36[] = []
  const add = (name: string, line: string, check: Job36['check']) => jobs.push({name, line, check})
  const wasm = '--backend wasm'
  // cause 1: long and empty documents
  add(
    'predict coref × a 6,000-word document',
    `${node} predict coref --model ft-coref/checkpoint-1 --data long.conll ${wasm} -o long.pred`,
    (r) =>
      ok(r) ??
      (readFileSync(join(tmp, 'long.pred'), 'utf8')
        .split('\n')
        .filter((l) => /^long\t/.test(l)).length === 6000
        ? null
        : 'not every word written'),
  )
  add(
    'finetune coref --dev × a 6,000-word document',
    `${node} finetune coref --train coref.conll --dev long.conll --init pre/checkpoint-1 --batch-size 2 --epochs 1 --stop-at 1 ${wasm} --max-segment-len 32 --ffnn-size 8 --out i36-long-run > /dev/null`,
    ok,
  )
  add(
    'predict coref × a document of no words',
    `${node} predict coref --model ft-coref/checkpoint-1 --data nowords.conll ${wasm}`,
    (r) => ok(r) ?? (r.stdout === readFileSync(join(tmp, 'nowords.conll'), 'utf8') ? null : 'not the document as read'),
  )
  add(
    'finetune coref × a training document of no words',
    `cat nowords.conll coref.conll > i36-mixed.conll; ${node} finetune coref --train i36-mixed.conll --dev nowords.conll --init pre/checkpoint-1 --batch-size 2 --epochs 1 --stop-at 1 ${wasm} --max-segment-len 32 --ffnn-size 8 --out i36-empty-run > /dev/null`,
    (r) => ok(r) ?? (/1 training document without words left out/.test(r.stderr) ? null : 'not said'),
  )
  add('eval coref × a document of no words', `${node} eval coref --gold nowords.conll --pred nowords.conll --json`, ok)
  for (const [cmd, c] of Object.entries(cmds)) {
    if (!/--model|--init|^encode|^fill|^eval coref|^predict/.test(c.args) || cmd === 'export') continue
    const out = `i36-e-${cmd.replace(' ', '-')}`
    add(`${cmd} × an empty input file`, `${node} ${c.args.replace('IN', 'empty-file').replace('OUT', out)} > /dev/null`, handled(cmd))
  }
  // cause 4: inconsistent model files, for every command that reads a model
  const overlapping = /overlaps "/
  add(
    'encode × overlapping safetensors ranges',
    `echo the dog | ${node} tokenize | ${node} encode --model i36-overlap-pre ${wasm} > /dev/null`,
    oneLine('encode', 1, overlapping),
  )
  add('fill × overlapping safetensors ranges', `${node} fill masked.txt --model i36-overlap-pre ${wasm} > /dev/null`, oneLine('fill', 1, overlapping))
  add('export × overlapping safetensors ranges', `${node} export --model i36-overlap-pre --format pytorch --to i36-x`, oneLine('export', 1, overlapping))
  add(
    'finetune glue --init × overlapping safetensors ranges',
    `${node} finetune glue --task mrpc --train mrpc.tsv --init i36-overlap-pre --batch-size 2 --epochs 1 --stop-at 1 ${wasm} --max-len 32 --out i36-o > /dev/null`,
    oneLine('finetune glue', 1, overlapping),
  )
  for (const t of TASKS) {
    const c = cmds[`predict ${t}`]
    add(
      `predict ${t} × overlapping safetensors ranges`,
      `${node} ${c.args.replace('IN', c.input).replace('OUT', `i36-p-${t}`).replace(`ft-${t}/checkpoint-1`, `i36-overlap-${t}`)} > /dev/null`,
      oneLine(`predict ${t}`, 1, overlapping),
    )
  }
  for (const t of ['coref', 'glue', 'tacred', 'nli', 'ner']) {
    const c = cmds[`predict ${t}`]
    add(
      `predict ${t} × a config.json whose head disagrees with the weights`,
      `${node} ${c.args.replace('IN', c.input).replace('OUT', `i36-h-${t}`).replace(`ft-${t}/checkpoint-1`, `i36-head-${t}`)} > /dev/null`,
      oneLine(`predict ${t}`, 1, /config\.json and the weights disagree|outputs, MRPC needs 2/),
    )
  }
  add(
    'export × weights with a layer config.json lacks',
    `${node} export --model i36-layer-pre --format pytorch --to i36-y`,
    oneLine('export', 1, /layer 1, config\.json has num_hidden_layers 1/),
  )
  add(
    'encode × weights with a layer config.json lacks',
    `echo the dog | ${node} tokenize | ${node} encode --model i36-layer-pre ${wasm} > /dev/null`,
    oneLine('encode', 1, /layer 1, config\.json has num_hidden_layers 1/),
  )
  // cause 7: a model of another task, for every predict command
  for (const t of TASKS) {
    const c = cmds[`predict ${t}`]
    const other = t === 'coref' ? 'ner' : 'coref'
    add(
      `predict ${t} × a ${other} model`,
      `${node} ${c.args.replace('IN', c.input).replace('OUT', `i36-w-${t}`).replace(`ft-${t}/`, `ft-${other}/`)} > /dev/null`,
      oneLine(`predict ${t}`, 1, new RegExp(`a span finetune ${other} model, not`)),
    )
  }
  // cause 5: silent wrong scores
  add(
    'eval coref × a split that selects no document',
    `${node} eval coref --gold gum --split test --pred coref.conll`,
    oneLine('eval coref', 1, /none of the 1 documents splits\.md's split 'test' names/),
  )
  add(
    'predict coref --singletons --no-singletons',
    `${node} predict coref --model ft-coref/checkpoint-1 --data coref.conll --singletons --no-singletons`,
    oneLine('predict coref', 2, /contradict/),
  )
  add(
    'finetune coref --singletons --no-singletons',
    `${node} finetune coref --train coref.conll --init pre/checkpoint-1 --singletons --no-singletons --out i36-s`,
    oneLine('finetune coref', 2, /contradict/),
  )
  for (const [cmd, c] of Object.entries(cmds)) {
    if (!cmd.startsWith('eval ')) continue
    const flags = [...c.args.matchAll(/ (--(?:gold|data|pred|a|b)) /g)].map((m) => m[1])
    const line = c.args
      .replace('IN', c.input)
      .replace(new RegExp(`${flags[0]} \\S+`), `${flags[0]} -`)
      .replace(/--pred \S+|--a \S+/, (m) => `${m.split(' ')[0]} -`)
    add(`${cmd} × two inputs from stdin`, `${node} ${line} < /dev/null`, oneLine(cmd, 2, /both read stdin/))
  }
  return jobs
}
