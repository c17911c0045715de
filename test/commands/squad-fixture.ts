// A one-paragraph SQuAD set shared by the finetune and predict command tests.
export const context = 'The old man walked to the river in the morning. He saw a boat and a small house near the water.'
export const qas = [
  {id: 'q1', question: 'Where did the man walk?', answers: [{text: 'the river', answer_start: 22}]},
  {id: 'q2', question: 'What did he see?', answers: [{text: 'a boat', answer_start: 55}]},
  {id: 'q3', question: 'When did he walk?', answers: [{text: 'the morning', answer_start: 35}]},
]
/** SQuAD JSON of the paragraph with the given questions. */
export const squad = (q: unknown[], version = '1.1'): string => JSON.stringify({version, data: [{title: 't', paragraphs: [{context, qas: q}]}]})
