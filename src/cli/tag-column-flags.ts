import {Flags} from '@oclif/core'
import {SpanError} from '../core/util/errors.js'
import {type TagColumn, describeColumn} from '../core/tasks/ner/tag-column.js'

/** --tag-column and --tag-types of finetune ner and eval ner (core/tasks/ner/tag-column.ts). */
export function tagColumnFlags() {
  return {
    'tag-column': Flags.string({
      description: "column of the tags: ner (the last), chunk (CoNLL-2003's third), pos, last, or a column number from 2",
      default: 'ner',
    }),
    'tag-types': Flags.string({description: 'comma-separated tag types kept (e.g. NP); the others read as O (default: every type)'}),
  }
}

/** Every --tag-types type must occur in the training file's tag column: one that does not is that file's error. */
export function checkTypesPresent(column: TagColumn, labels: readonly string[], train: string): void {
  for (const t of column.types ?? [])
    if (!labels.includes(`B-${t}`)) throw new SpanError(`${train}: no ${t} tags in ${describeColumn(column)} (--tag-types ${[...column.types!].join(',')})`)
}
