#!/usr/bin/env python3
"""Write synth/testdata/grounding/locomo_questions.json: LoCoMo questions
with the turns around their evidence, for the test that the extractive
answer passes its own grounding verifier (TestExtractivePassesItsVerifier).

Every 5th question of categories 1, 2 and 4 (multi-hop, temporal,
single-hop), each with its evidence turns and the turn before and after
each, stored as cairn stores a turn ("Speaker: text", an image's caption
appended), at most 8. LoCoMo is CC BY-NC 4.0 (testdata/locomo/SOURCE.md).

    python3 scripts/grounding-locomo-questions.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def content(t):
    s = t["speaker"] + ": " + t["text"]
    if t.get("blip_caption"):
        s += " [shared an image: " + t["blip_caption"] + "]"
    return s


def main():
    data = json.load(open(os.path.join(ROOT, "testdata", "locomo", "locomo10.json")))
    out = []
    for conv in data:
        order, turns = [], {}
        for k, v in conv["conversation"].items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    order.append(t["dia_id"])
                    turns[t["dia_id"]] = t
        n = 0
        for q in conv["qa"]:
            if q["category"] not in (1, 2, 4):
                continue
            n += 1
            if n % 5:
                continue
            ids = []
            for e in q["evidence"]:
                if e not in turns:
                    continue
                i = order.index(e)
                for j in (i, i - 1, i + 1):
                    if 0 <= j < len(order) and order[j] not in ids:
                        ids.append(order[j])
            if not ids:
                continue
            ids = ids[:8]
            out.append({"id": conv["sample_id"] + "/" + str(n), "question": q["question"],
                        "sources": [{"id": conv["sample_id"] + "/" + d, "text": content(turns[d])} for d in ids]})
    path = os.path.join(ROOT, "synth", "testdata", "grounding", "locomo_questions.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print(len(out), "questions")


if __name__ == "__main__":
    main()
