import {Flags} from '@oclif/core'

/** `span finetune glue`'s Span Fine-tuning flags (src/core/tasks/glue/span-ft.ts has the defaults and why). */
export function glueSpanFtFlags() {
  return {
    'span-ft': Flags.boolean({description: 'Span Fine-tuning (Bao et al. §3): the span CNN beside [CLS]'}),
    dict: Flags.string({
      description: "n-gram dictionary for --span-ft: ours (span segment-ngrams --build), the reference's JSON {ngram: count}, or ngram<TAB>count lines",
    }),
    'span-ft-defaults': Flags.string({
      description:
        "where r and l default from: 'reference' (run_glue.sh/script.py: r 48–128 by task, l 16; the default, the code behind the paper's numbers) or 'paper' (§4.1's text: r 16, l 64/128)",
      options: ['reference', 'paper'],
      default: 'reference',
    }),
    'max-spans': Flags.integer({description: 'r: spans per example, [CLS] and [SEP]s included (default: see --span-ft-defaults)', min: 3}),
    'max-span-tokens': Flags.integer({description: 'l: tokens per span (default: see --span-ft-defaults)', min: 1}),
    'span-ft-padding': Flags.string({description: "Conv1d zero padding: 0 as the reference's CNN_conv1d, or 1", options: ['0', '1'], default: '0'}),
    'span-ft-cls': Flags.string({
      description:
        "what s is concatenated with: [CLS]'s raw vector t₁ (§3.2), the pooler's output (the reference with --do_concat), or none (its run_glue.sh: s alone)",
      options: ['raw', 'pooled', 'none'],
      default: 'raw',
    }),
    segmentation: Flags.string({
      description:
        "spans from the dictionary, 'random' (§5.1: the training examples' span lengths shuffled, as the reference's --do_random), or 'none' (§5.1 '+ CNN': both convolutions over the tokens, no dictionary)",
      options: ['dict', 'random', 'none'],
      default: 'dict',
    }),
  }
}
