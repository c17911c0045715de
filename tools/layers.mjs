// The rooms of src/ and what each may import: docs/architecture.md's table (and the shared
// ARCHITECTURE.md's "knows about" column) as data, read by tools/import-cycles.mjs, which `npm run
// lint` runs. A room is src/commands, src/cli or a folder of src/core; a file outside every room
// fails, so a new room has to be placed here first. `may` lists the other rooms a room imports
// from (its own files always may); it must stay acyclic, so rooms form layers. `tensors: false`:
// no @tensorflow package (the pure rooms, and commands, which wire streams and hold no tensor code).
//
// Where a room imports more than the architecture table's column names, the entry says why (`why`);
// util and stream are the floor every room above them stands on (util: SpanError, the seeded RNG,
// atomic writes, the launcher's environment; stream: the NDJSON reader and writer, errors with
// source:line).

const FLOOR = ['core/util', 'core/stream']

export const ROOMS = {
  commands: {may: ['cli', 'core/*'], tensors: false},
  cli: {may: ['core/*'], tensors: false},
  'core/doctor': {
    may: ['core/engine', 'core/model', 'core/train', ...FLOOR],
    why: "`span doctor --selftest`'s training step and AdamW cases: above model and train, so the engine under them never imports them",
  },
  'core/demo': {may: ['core/plot', 'core/text', ...FLOOR], tensors: false, why: '`span demo`: a tokenized corpus and its charts'},
  'core/plot': {
    may: ['core/train', 'core/data', ...FLOOR],
    tensors: false,
    why: "charts of a run: reads train/'s TensorBoard event files and data/'s chart files",
  },
  'core/tasks': {
    may: ['core/text', 'core/data', 'core/model', 'core/train', 'core/metrics', 'core/engine', ...FLOOR],
    why: "metrics: a task scores its own predictions; engine: coref's head gathers span rows with the engine's gather op, as model/'s heads do; data: `span tag` (tasks/ner) reads token records and blocks and writes their tags in data/'s formats",
  },
  'core/train': {
    may: ['core/model', 'core/data', 'core/dist', 'core/engine', 'core/text', ...FLOOR],
    why: 'dist: gradients all-reduced and rank 0 writes; engine: the backend, precision and device memory a run starts with; text: the vocabulary a run directory records',
  },
  'core/model': {
    may: ['core/engine', 'core/data', 'core/text', ...FLOOR],
    why: "data: batches are collated from data/'s masked and encoded records; text: a checkpoint carries its vocabulary, fill decodes with the tokenizer",
  },
  'core/dist': {may: ['core/engine', ...FLOOR]},
  'core/engine': {may: [...FLOOR]},
  'core/data': {may: ['core/text', ...FLOOR], tensors: false},
  'core/text': {may: [...FLOOR], tensors: false},
  'core/metrics': {may: ['core/util'], tensors: false},
  'core/stream': {may: ['core/util'], tensors: false, why: 'util: SpanError and errorAt live in util, stream re-exports them'},
  'core/util': {may: [], tensors: false},
}
