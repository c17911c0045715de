"""Makes fixtures/squad/golden-v1.json and golden-v2.json: hand-built SQuAD datasets and
predictions scored by the ports of the official scripts (squad_official_v1.py, squad_official_v2.py).
Each case keeps its inputs, the scorer's dict (`expected`) and the exact text the official script
prints (`stdout`). Run from the repository root: python3 tools/squad_official_goldens.py
"""
import json
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import squad_official_v1 as v1  # noqa: E402
import squad_official_v2 as v2  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'squad')
NOTE = ('Produced by tools/squad_official_goldens.py with the ports of the official SQuAD scripts '
        '(tools/squad_official_v1.py, tools/squad_official_v2.py); do not edit by hand.')


def dataset(version, qas_lists):
    """One article, one paragraph per list of (id, [answer texts]) (context: the answers joined)."""
    paragraphs = []
    for qas in qas_lists:
        context = ' | '.join(t for _, answers in qas for t in answers) or 'empty'
        items = []
        for qid, answers in qas:
            pos, found = 0, []
            for t in answers:
                found.append({'text': t, 'answer_start': context.find(t)})
            item = {'id': qid, 'question': 'q ' + qid + '?', 'answers': found}
            if version != '1.1':
                item['is_impossible'] = not answers
            items.append(item)
        paragraphs.append({'context': context, 'qas': items})
    return {'version': version, 'data': [{'title': 'T', 'paragraphs': paragraphs}]}


# pairs of (gold, prediction) that exercise normalize_answer; each becomes one question
NORMALIZE_PAIRS = [
    ('The Rhine', 'rhine'), ('the Rhine', 'THE RHINE.'), ('Rhine!', 'rhine'),
    ('an apple', 'apple'), ('Anne', 'nne'), ('theatre', 'atre'), ('a', ''), ('The', 'the'),
    ('“The Rhine”', 'Rhine'), ('“The Rhine”', '“ Rhine”'), ('‘Rhine’', 'Rhine'), ('1990–1995', '1990 1995'),
    ('«a» b', '«a» b'), ('«a» b', 'b'), ('10\u00a0km', '10 km'), ('10\u2003km', '10 km'),
    ('10\u3000km', '10 km'), ('10\x1ckm', '10 km'), ('10\x85km', '10 km'), ('10\u200bkm', '10 km'),
    ('10\ufeffkm', '10 km'), ('10\u202fkm', '10 km'), ('10\u2028km', '10 km'), ('a\u0301 b', 'b'),
    ('à la carte', 'la carte'), ('the_end', 'theend'), ('the-end', 'theend'), ('the-end', 'end'),
    ('a.b', 'ab'), ('ΟΔΟΣ', 'οδος'), ('ΟΔΟΣ', 'οδoς'), ('İstanbul', 'i̇stanbul'), ('İstanbul', 'istanbul'),
    ('cat cat dog', 'cat dog dog'), ('the cat the cat', 'cat'), ('New  York\tCity', 'new york city'),
    ('$1,000', '1000'), ('an\u00a0an a', ''), ('A\u00a0the\u2003AN x', 'x'), ('Ⅻ the', 'Ⅻ'),
    ('x²the', 'x²the'), ('x² the', 'x²'), ('١٢ the', '١٢'), ('theʼ', 'the'), ('ʼthe', 'the'),
]


def v1_cases():
    norm = dataset('1.1', [[('n%02d' % i, [g]) for i, (g, _) in enumerate(NORMALIZE_PAIRS)]])
    norm_preds = {'n%02d' % i: p for i, (_, p) in enumerate(NORMALIZE_PAIRS)}
    multi = dataset('1.1', [[('m1', ['Denver Broncos', 'the Broncos', 'Broncos']), ('m2', ['Santa Clara, California', "Levi's Stadium", "Levi's Stadium in the San Francisco Bay Area at Santa Clara, California."]),
                             ('m3', ['1000', 'a thousand']), ('m4', ['The', 'the the']), ('m5', ['x y z', 'y z w'])]])
    multi_preds = {'m1': 'Carolina Panthers Broncos', 'm2': "Levi's Stadium in Santa Clara", 'm3': '', 'm4': '', 'm5': 'z y'}
    missing_preds = {'m1': 'Broncos', 'm3': 'thousand', 'm5': 'w', 'zz-unknown': 'x'}
    return [('normalize', norm, norm_preds), ('multiple-gold', multi, multi_preds), ('missing-and-unknown', multi, missing_preds)]


def v2_dataset():
    return dataset('v2.0', [[('a1', ['Normandy', 'Normandy', 'Normandy, a region in France']), ('a2', ['10th and 11th centuries', 'in the 10th and 11th centuries']),
                             ('u1', []), ('u2', []), ('a3', ['Rollo']), ('a4', ['The', 'a']), ('u3', []), ('a5', ['Frankish', 'Frankish law'])]])


V2_PREDS = {'a1': 'Normandy', 'a2': '10th century', 'u1': '', 'u2': 'Rollo', 'a3': '', 'a4': '', 'u3': 'France', 'a5': 'Frankish law codes', 'zz': 'unknown id'}


def v2_cases():
    d = v2_dataset()
    ties = {'u1': 0.5, 'a3': 0.5, 'u2': 0.5, 'a1': 0.25, 'a2': 0.25, 'u3': 0.25, 'a4': 0.75, 'a5': 0.75, 'zz': 0.1}
    ties_rev = {k: ties[k] for k in ['u2', 'a3', 'u1', 'u3', 'a2', 'a1', 'a5', 'a4', 'zz']}
    odds = {'a1': -3.5, 'a2': -0.75, 'u1': 2.0, 'u2': 0.125, 'a3': 1.0, 'a4': 1e-05, 'u3': -1.0, 'a5': -2.0}
    only_has = dataset('v2.0', [[('a1', ['Normandy']), ('a2', ['Rollo', 'Rollo the Viking'])]])
    only_no = dataset('v2.0', [[('u1', []), ('u2', []), ('u3', [])]])
    low = {'a1': 5.0, 'a2': 6.0, 'u1': 7.0, 'u2': 8.0, 'a3': 9.0, 'a4': 10.0, 'u3': 11.0, 'a5': 12.0}
    return [
        ('no-na-probs', d, V2_PREDS, None, 1.0),
        ('na-probs-default-thresh', d, V2_PREDS, odds, 1.0),
        ('na-probs-thresh-0', d, V2_PREDS, odds, 0.0),
        ('na-probs-thresh-negative', d, V2_PREDS, odds, -1.0),
        ('ties-in-na-probs', d, V2_PREDS, ties, 0.5),
        ('ties-in-na-probs-other-order', d, V2_PREDS, ties_rev, 0.5),
        ('best-thresh-stays-initial', d, V2_PREDS, low, 1.0),
        ('no-file-negative-thresh', d, V2_PREDS, None, -0.5),
        ('only-answerable', only_has, {'a1': 'normandy', 'a2': 'the viking'}, {'a1': 0.9, 'a2': 0.1}, 1.0),
        ('only-unanswerable', only_no, {'u1': '', 'u2': 'x', 'u3': ''}, {'u1': 0.3, 'u2': 0.2, 'u3': 0.1}, 1.0),
    ]


SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'data', 'squad')


def perturbed_prediction(rng, context, qa):
    """A made-up system answer: gold, gold re-cased/punctuated, a shifted or widened span, a plausible
    answer, another part of the context, or nothing."""
    answers = qa['answers'] or qa.get('plausible_answers') or [{'text': '', 'answer_start': 0}]
    a = rng.choice(answers)
    start, end = a['answer_start'], a['answer_start'] + len(a['text'])
    kind = rng.randrange(7)
    if kind == 0:
        return a['text']
    if kind == 1:
        return a['text'].upper() + rng.choice(['', '.', ' ,', ' !'])
    if kind == 2:
        return context[max(0, start - rng.randrange(12)):end + rng.randrange(12)]
    if kind == 3:
        return context[start + rng.randrange(1 + len(a['text']) // 2):end]
    if kind == 4:
        return ''
    if kind == 5:
        s = rng.randrange(len(context))
        return context[s:s + rng.randrange(1, 40)]
    return 'the ' + a['text'] + ' the'


def real_case(name, file, seed, with_na):
    with open(os.path.join(SHARED, file), encoding='utf-8') as f:
        data = json.load(f)
    rng = random.Random(seed)
    preds, na_probs = {}, {}
    for art in data['data']:
        for p in art['paragraphs']:
            for qa in p['qas']:
                preds[qa['id']] = perturbed_prediction(rng, p['context'], qa)
                # few distinct values, so find_best_thresh meets many ties
                na_probs[qa['id']] = rng.choice([-2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 1.5, 3.0])
    if with_na:
        res = v2.evaluate(data['data'], preds, na_probs, 0.5)
        return {'name': name, 'dataset': '../shared/data/squad/' + file, 'predictions': preds, 'na_probs': na_probs,
                'na_prob_thresh': 0.5, 'expected': res, 'stdout': json.dumps(res, indent=2) + '\n'}
    res = v1.evaluate(data['data'], preds)
    return {'name': name, 'dataset': '../shared/data/squad/' + file, 'predictions': preds, 'expected': res, 'stdout': json.dumps(res) + '\n'}


def write(name, cases):
    path = os.path.join(OUT, name)
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({'note': NOTE, 'cases': cases}, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print('wrote', path, len(cases), 'cases')


def main():
    out1 = []
    for name, data, preds in v1_cases():
        res = v1.evaluate(data['data'], preds)
        out1.append({'name': name, 'data': data, 'predictions': preds, 'expected': res, 'stdout': json.dumps(res) + '\n'})
    out2 = []
    for name, data, preds, na_probs, thresh in v2_cases():
        res = v2.evaluate(data['data'], preds, na_probs, thresh)
        case = {'name': name, 'data': data, 'predictions': preds, 'na_prob_thresh': thresh}
        if na_probs is not None:
            case['na_probs'] = na_probs
        case.update({'expected': res, 'stdout': json.dumps(res, indent=2) + '\n'})
        out2.append(case)
    write('golden-v1.json', out1)
    write('golden-v2.json', out2)
    normalize = [{'text': t, 'normalized': v2.normalize_answer(t)} for pair in NORMALIZE_PAIRS for t in pair]
    write('golden-normalize.json', normalize)
    write('golden-real.json', [real_case('xquad-v1.1', 'xquad.en.json', 1, False),
                               real_case('normans-rhine-v2.0', 'squad-v2.0-dev-subset-normans-rhine.json', 2, True)])


if __name__ == '__main__':
    main()
