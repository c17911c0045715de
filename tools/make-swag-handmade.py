"""Makes fixtures/swag/handmade-{train,dev}.csv: a small hand-made multiple-choice set in SWAG's
CSV layout (the real SWAG is not in ../shared/data). Each context names an object and where it
is; the right ending does what one does with that object, the three others do it to objects the
context never mentions, so a model has to relate the ending to the context. Seeded; run from the
repository root: python3 tools/make-swag-handmade.py
"""
import csv
import os
import random

OBJECTS = {
    'apple': 'eats the apple', 'book': 'reads the book', 'guitar': 'plays the guitar', 'ball': 'kicks the ball',
    'letter': 'opens the letter', 'coffee': 'drinks the coffee', 'bike': 'rides the bike', 'door': 'closes the door',
    'shirt': 'folds the shirt', 'phone': 'answers the phone', 'car': 'washes the car', 'dog': 'walks the dog',
    'cake': 'slices the cake', 'window': 'cleans the window', 'plant': 'waters the plant', 'song': 'sings the song',
}
PLACES = ['kitchen', 'garden', 'office', 'street', 'park', 'shop', 'school', 'room']
PEOPLE = [('A man', 'He'), ('A woman', 'She'), ('The boy', 'He'), ('The girl', 'She'), ('Someone', 'They')]
HEADER = ['', 'video-id', 'fold-ind', 'startphrase', 'sent1', 'sent2', 'gold-source', 'ending0', 'ending1', 'ending2', 'ending3', 'label']


def example(rng, i, split):
    obj = rng.choice(sorted(OBJECTS))
    who, pron = rng.choice(PEOPLE)
    sent1 = f'{who} finds a {obj} in the {rng.choice(PLACES)}.'
    sent2 = f'{pron} then'
    others = rng.sample([o for o in sorted(OBJECTS) if o != obj], 3)
    endings = [OBJECTS[obj] + '.'] + [OBJECTS[o] + '.' for o in others]
    order = list(range(4))
    rng.shuffle(order)
    label = order.index(0)
    return [str(i), f'handmade-{split}', str(i), f'{sent1} {sent2}', sent1, sent2, 'gold'] + [endings[k] for k in order] + [str(label)]


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'swag')
    os.makedirs(out, exist_ok=True)
    for split, n, seed in (('train', 800, 1), ('dev', 200, 2)):
        rng = random.Random(seed)
        with open(os.path.join(out, f'handmade-{split}.csv'), 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(HEADER)
            for i in range(n):
                w.writerow(example(rng, i, split))


if __name__ == '__main__':
    main()
