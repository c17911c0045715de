"""The Hugging Face figure beside `span predict squad` (bench/squad-predict.mjs runs it).

Hugging Face's way of predicting SQuAD (transformers 5 has no question-answering pipeline any
more; this is what its examples/pytorch/question-answering run_qa.py does: the fast tokenizer's
overflowing windows with offsets, batched forward passes, utils_qa.py's postprocessing of the top
n-best starts and ends) over the same checkpoint span predicts with (span's
model.safetensors has Hugging Face's BertForQuestionAnswering names, so from_pretrained reads it),
the same questions, windows, answer length and batch, on the CPU with the given number of intra-op
threads. --doc-stride is run_squad's (the step between window starts, span's meaning); the
pipeline's doc_stride is the overlap of two windows, so it gets max-len − max-query-len − 3 − step
(0 when the step is longer than a window's context), which windows alike where the question is the
longest it may be:

  python bench/squad_predict_hf.py MODEL_DIR DATA.json OUT.json --max-len 128 --doc-stride 128 \
      --max-query-len 64 --max-answer-len 30 --batch-size 16 --threads 2

Prints one JSON line: the seconds to load (imports, tokenizer, model), the seconds of the
predictions alone, the questions, and writes {id: answer text} to OUT.json. --doc-stride and
--max-query-len default to what the span fine-tuning run saved (finetune_config.json), as span
predict's do.
"""

import argparse
import json
import time

T0 = time.perf_counter()
import torch  # noqa: E402
from transformers import BertForQuestionAnswering, BertTokenizerFast  # noqa: E402


def questions(path):
    """(id, question, context) of every question of a SQuAD file, in file order."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)["data"]
    return [(qa["id"], qa["question"], p["context"]) for a in data for p in a["paragraphs"] for qa in p["qas"]]


def saved_windows(model):
    """The window settings a span fine-tuning run saved beside its checkpoint, if any."""
    try:
        with open(model + "/finetune_config.json", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def windows(tok, items, o):
    """Every question's windows: the question, then as much context as fits, overlapping by
    max-len − max-query-len − 3 − doc-stride tokens (run_qa's prepare_validation_features)."""
    overlap = max(0, o.max_len - o.max_query_len - 3 - o.doc_stride)
    qs = [tok.decode(tok(q, add_special_tokens=False)["input_ids"][: o.max_query_len]) for _, q, _ in items]
    return tok(qs, [c for _, _, c in items], truncation="only_second", max_length=o.max_len, stride=overlap,
               return_overflowing_tokens=True, return_offsets_mapping=True, padding="max_length", return_tensors="pt")


def best_answer(start, end, offsets, seq_ids, context, o):
    """utils_qa.postprocess_qa_predictions for one window: the best start ≤ end within the context,
    at most max-answer-len tokens, among the n-best (20) starts and ends."""
    best = (float("-inf"), "")
    for i in torch.topk(start, 20).indices.tolist():
        for j in torch.topk(end, 20).indices.tolist():
            if seq_ids[i] != 1 or seq_ids[j] != 1 or j < i or j - i + 1 > o.max_answer_len:
                continue
            score = start[i].item() + end[j].item()
            if score > best[0]:
                best = (score, context[offsets[i][0] : offsets[j][1]])
    return best


def predict(model, tok, items, o):
    """{id: answer text}: each question's best window answer (the null answer where --v2 and it wins)."""
    enc = windows(tok, items, o)
    owner = enc.pop("overflow_to_sample_mapping").tolist()
    offsets = enc.pop("offset_mapping").tolist()
    seq_ids = [enc.sequence_ids(k) for k in range(len(owner))]
    best = {}
    with torch.inference_mode():
        for b in range(0, len(owner), o.batch_size):
            out = model(**{k: v[b : b + o.batch_size] for k, v in enc.items()})
            for k in range(out.start_logits.shape[0]):
                w = b + k
                qid, _, context = items[owner[w]]
                s, e = out.start_logits[k], out.end_logits[k]
                cand = best_answer(s, e, offsets[w], seq_ids[w], context, o)
                if o.v2 and (s[0] + e[0]).item() > cand[0]:
                    cand = ((s[0] + e[0]).item(), "")
                if qid not in best or cand[0] > best[qid][0]:
                    best[qid] = cand
    return {qid: text for qid, (_, text) in best.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("out")
    for name, default in [("max-len", 384), ("doc-stride", None), ("max-query-len", None), ("max-answer-len", 30), ("batch-size", 16), ("threads", 2)]:
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--v2", action="store_true", help="SQuAD 2.0: an empty answer may win")
    o = ap.parse_args()
    saved = saved_windows(o.model)  # as span predict: the fine-tuned run's windows, else run_squad's defaults
    o.doc_stride = o.doc_stride or saved.get("doc-stride", 128)
    o.max_query_len = o.max_query_len or saved.get("max-query-len", 64)
    torch.set_num_threads(o.threads)
    # from the folder (vocab.txt, tokenizer_config.json's do_lower_case): transformers 5 ignores a
    # vocab_file given to the constructor and tokenizes every word as [UNK]
    tok = BertTokenizerFast.from_pretrained(o.model)
    model = BertForQuestionAnswering.from_pretrained(o.model).eval()
    items = questions(o.data)
    loaded = time.perf_counter()
    answers = predict(model, tok, items, o)
    done = time.perf_counter()
    with open(o.out, "w", encoding="utf-8") as f:
        json.dump(answers, f)
    print(json.dumps({"questions": len(items), "load_s": round(loaded - T0, 2), "predict_s": round(done - loaded, 2),
                      "threads": o.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
