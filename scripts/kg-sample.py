#!/usr/bin/env python3
"""Draw the sentences of testdata/kg_extraction/real.jsonl from real text.

Reads, read-only, what this machine holds:
  * the Debian changelogs installed packages ship
    (/usr/share/doc/*/changelog.Debian.gz): one change entry (a bullet and
    its continuation lines) is one sentence; maintainer trailer lines are
    metadata and are left out;
  * LoCoMo's conversation turns (locomo10.json), split into sentences;
  * the READMEs and CHANGELOGs of the Go modules in GOMODCACHE, prose only
    (no code blocks, tables, headings, badges or link-only lines), split
    into sentences.

  * for the EDGE stratum only, the doc comments of Go's standard library
    (GOROOT/src, no tests, testdata, vendor, cmd or internal), split into
    sentences.

Every candidate sentence is ordered by the SHA-256 of "origin:text" and
drawn in that order, so the draw depends on nothing but the text. Per
source it takes PLAIN sentences of any kind, and then VERB sentences among
those that hold a verb of relation (a broad list, wider than the
extractor's vocabulary), so that edges are measured on enough cases.
Last comes an EDGE stratum (Debian, the modules and the standard library):
sentences with a relation phrase that has a name-like token (capitalised
inside the sentence, or holding a digit, _ . / - or an inner capital, or in
backticks) among the four words before it and the four after it: real text
states few relations between two named things, and edges need cases.
Labels are added by hand afterwards; this script only draws.

    python3 scripts/kg-sample.py LOCOMO_JSON GOMODCACHE GOROOT/src > draw.jsonl

A second batch (drawn later, when the first halves had too few cases of
some kinds) continues each order past what the fixture holds: PLAIN2
sentences of every origin (the standard library's doc comments too) and
EDGE2 more edge sentences, at most one per Debian package and two per
other file:

    python3 scripts/kg-sample.py --second FIXTURE LOCOMO_JSON GOMODCACHE GOROOT/src > draw2.jsonl

A third batch (drawn when the edges were still too few to measure them,
and to reach text of another kind: Python's standard library) orders each
source afresh (keys prefixed "third:") and takes the first sentences the
fixture does not hold: PLAIN3 of any kind and EDGE3 edge sentences, at
most one per Debian package and two per other file; Python's docstrings
(module, class and function, prose paragraphs only) are a new origin:

    python3 scripts/kg-sample.py --third FIXTURE LOCOMO_JSON GOMODCACHE GOROOT/src /usr/lib/python3.11 > draw3.jsonl

A fourth batch (a fresh check of how far the rules tuned on the first
three generalise, and more edges) is drawn the same way with keys
prefixed "fourth:", PLAIN4 and EDGE4 sentences:

    python3 scripts/kg-sample.py --fourth FIXTURE LOCOMO_JSON GOMODCACHE GOROOT/src /usr/lib/python3.11 > draw4.jsonl

A fifth batch (a held-out check of the rules tuned on the first four, from
the three origins of text written for people: Debian changelogs, LoCoMo's
turns and the modules' READMEs and CHANGELOGs, with Go's doc comments for
edges, as the modules held only 9 edge sentences not drawn before) is
drawn the same way with keys prefixed "fifth:", PLAIN5 and EDGE5 sentences:

    python3 scripts/kg-sample.py --fifth FIXTURE LOCOMO_JSON GOMODCACHE GOROOT/src > draw5.jsonl
"""
import glob
import gzip
import hashlib
import json
import os
import re
import sys

PLAIN, VERB, EDGE = 55, 60, 80
MIN_LEN, MAX_LEN = 30, 320

VERBS = re.compile(r"\b(uses?|using|used|depends? on|depended on|requires?|required|relies on|calls?|called|talks? to|"
                   r"connects? to|owns?|owned|maintain(?:s|ed)?|leads?|led|works? on|worked on|runs? (?:on|in)|deployed|"
                   r"hosted|writes? (?:to|into)|reads? from|stores?|replace[sd]?|switch(?:ed|es)? to|migrat(?:ed|es) (?:to|from)|"
                   r"moved? (?:to|from)|ported to|part of|belongs? to|caused?|fix(?:es|ed)?|reviewed|created|wrote|"
                   r"written (?:in|by)|authored|built (?:with|on|by)|based on|powered by|monitors|integrates? with|wraps?|"
                   r"forked from|developed by)\b",
                   re.I)


REL = re.compile(r"\b(uses|use|used|using|depends on|depend on|requires|required by|relies on|calls|called by|talks to|"
                 r"connects to|owns|owned by|maintains|maintained by|leads|led by|works on|runs on|deployed (?:on|to)|hosted on|"
                 r"writes to|reads from|stores|replaces|replaced|replaced by|switched to|migrated (?:to|from)|moved (?:to|from)|"
                 r"ported to|part of|belongs to|caused|caused by|fixes|fixed|reviewed|created|created by|wrote|written in|"
                 r"written by|authored|built with|built on|based on|powered by|monitors|integrates with|wraps|forked from|"
                 r"developed by)\b", re.I)


def namey(tok, initial):
    t = tok.strip(".,;:()[]\"'")
    if not t:
        return False
    if "`" in tok or re.search(r"[A-Z]", t[1:]) or re.search(r"[\d_/.]", t) or "-" in t.strip("-"):
        return True
    return t[0].isupper() and not initial


def edgey(s):
    for m in REL.finditer(s):
        words = s[:m.start()].split()
        before, after = words[-4:], s[m.end():].split()[:4]
        first = len(words) - len(before)
        if any(namey(t, first + i == 0) for i, t in enumerate(before)) and any(namey(t, False) for t in after):
            return True
    return False


DRAWN = set()


def key(origin, text):
    return hashlib.sha256((origin + ":" + text).encode()).hexdigest()


def clean(s):
    return re.sub(r"\s+", " ", s).strip()


def debian():
    out = []
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        pkg = path.split("/")[4]
        try:
            lines = gzip.open(path, "rt", errors="replace").read().splitlines()
        except OSError:
            continue
        entry = None
        for line in lines + [""]:
            m = re.match(r"^\s+[*+-]\s+(.*)$", line)
            if m or not line.strip() or line.startswith(" --") or re.match(r"^\S", line):
                if entry:
                    out.append((pkg, clean(" ".join(entry))))
                entry = [m.group(1)] if m else None
            elif entry is not None:
                entry.append(line.strip())
    return out


def sentences(text):
    return [clean(s) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(`])", text) if clean(s)]


def locomo(path):
    out = []
    data = json.load(open(path))
    for sample in data:
        conv = sample["conversation"]
        for k, turns in conv.items():
            if not k.startswith("session_") or not isinstance(turns, list):
                continue
            for t in turns:
                for s in sentences(t["text"]):
                    out.append((sample["sample_id"] + ":" + t["dia_id"], s))
    return out


def prose(md):
    md = re.sub(r"```.*?```", " ", md, flags=re.S)
    md = re.sub(r"<!--.*?-->", " ", md, flags=re.S)
    paras, cur = [], []
    for line in md.splitlines():
        st = line.strip()
        if not st or st.startswith(("#", "|", "    ", "\t", "[![", "![", "<", "===", "---")) or re.fullmatch(r"\[[^\]]*\]\([^)]*\)\.?", st):
            if cur:
                paras.append(" ".join(cur))
            cur = []
            if st.startswith(("- ", "* ")):
                cur = [st[2:]]
            continue
        if st.startswith(("- ", "* ")):
            if cur:
                paras.append(" ".join(cur))
            cur = [st[2:]]
            continue
        cur.append(st)
    if cur:
        paras.append(" ".join(cur))
    out = []
    for p in paras:
        p = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", p)  # links keep their text
        out.extend(sentences(p))
    return out


def gomod(root):
    out, seen = [], set()
    files = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("cache", "testdata", "vendor", "node_modules", ".git"))
        for n in sorted(names):
            if re.match(r"(?i)^(readme|changelog|changes)[^/]*\.md$", n):
                files.append(os.path.join(dirpath, n))
    for f in files:
        rel = os.path.relpath(f, root)
        mod = re.sub(r"@[^/]+", "", rel)  # one copy per module path, whatever its version
        if mod in seen:
            continue
        seen.add(mod)
        for s in prose(open(f, errors="replace").read()):
            out.append((mod, s))
    return out


def gostd(root):
    out = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("testdata", "vendor", "cmd", "internal"))
        for n in sorted(names):
            if not n.endswith(".go") or n.endswith("_test.go"):
                continue
            path = os.path.join(dirpath, n)
            block = []
            for line in open(path, errors="replace"):
                st = line.strip()
                if st.startswith("//") and not st.startswith("//go:"):
                    block.append(st[2:].strip())
                    continue
                if block and re.match(r"(func|type|package|var|const)\b", st):
                    for s in sentences(" ".join(b for b in block if b)):
                        out.append((os.path.relpath(path, root), s))
                block = []
    return out


def draw_edges(origin, items, per_group):
    items = [(where, s) for where, s in items if MIN_LEN <= len(s) <= MAX_LEN and edgey(s)]
    uniq = {}
    for where, s in items:
        uniq.setdefault(s, where)
    out, count = [], {}
    for s in sorted(uniq, key=lambda s: key("edge:" + origin, s)):
        if s in DRAWN:
            continue  # drawn in an earlier stratum
        if count.get(uniq[s], 0) < per_group and len(out) < EDGE:
            out.append(s)
            count[uniq[s]] = count.get(uniq[s], 0) + 1
    for s in out:
        print(json.dumps({"origin": origin, "where": uniq[s], "stratum": "edge", "text": s}, ensure_ascii=False))


def draw(origin, items, group=lambda where: where, per_group=1000):
    """Draws PLAIN then VERB sentences in hash order, at most per_group of
    each stratum from one group (a Debian package, a module's file)."""
    items = [(where, s) for where, s in items if MIN_LEN <= len(s) <= MAX_LEN and sum(c.isalpha() for c in s) > len(s) / 2]
    uniq = {}
    for where, s in items:
        uniq.setdefault(s, where)
    order = sorted(uniq, key=lambda s: key(origin, s))

    def take(cands, n):
        out, count = [], {}
        for s in cands:
            g = group(uniq[s])
            if count.get(g, 0) < per_group and len(out) < n:
                out.append(s)
                count[g] = count.get(g, 0) + 1
        return out
    plain = take(order, PLAIN)
    verb = take([s for s in order if s not in plain and VERBS.search(s)], VERB)
    for stratum, part in (("plain", plain), ("verb", verb)):
        for s in part:
            DRAWN.add(s)
            print(json.dumps({"origin": origin, "where": uniq[s], "stratum": stratum, "text": s}, ensure_ascii=False))


PLAIN2 = {"debian": 45, "gomod": 45, "gostd": 45, "locomo": 20}
EDGE2 = {"debian": 25, "gostd": 25}


def second(fixture, sources):
    """Draws the second batch: the next sentences of each order that the
    fixture does not hold."""
    held = {json.loads(line)["text"] for line in open(fixture)}
    for origin, items in sources:
        items = [(w, s) for w, s in items if MIN_LEN <= len(s) <= MAX_LEN and sum(c.isalpha() for c in s) > len(s) / 2]
        uniq = {}
        for where, s in items:
            uniq.setdefault(s, where)
        per = 1 if origin == "debian" else 2
        for stratum, n, keyed, ok in (("plain2", PLAIN2.get(origin, 0), origin, lambda s: True),
                                      ("edge2", EDGE2.get(origin, 0), "edge:" + origin, edgey)):
            out, count = [], {}
            for s in sorted(uniq, key=lambda s: key(keyed, s)):
                if len(out) >= n:
                    break
                if s in held or not ok(s) or count.get(uniq[s], 0) >= per:
                    continue
                out.append(s)
                held.add(s)
                count[uniq[s]] = count.get(uniq[s], 0) + 1
            for s in out:
                print(json.dumps({"origin": origin, "where": uniq[s], "stratum": stratum, "text": s}, ensure_ascii=False))


def pystd(root):
    """Docstrings (module, class, function) of Python's standard library,
    prose paragraphs only (no doctest or indented code lines), split into
    sentences."""
    import ast
    out = []
    skip = ("test", "tests", "idlelib", "site-packages", "dist-packages", "__pycache__", "_bundled", "lib2to3", "turtledemo")
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("config-"))
        for n in sorted(names):
            if not n.endswith(".py") or n.startswith("test_"):
                continue
            path = os.path.join(dirpath, n)
            try:
                tree = ast.parse(open(path, errors="replace").read())
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                for para in re.split(r"\n\s*\n", doc):
                    lines = para.splitlines()
                    if any(l.lstrip().startswith((">>>", "...")) or l.startswith((" ", "\t")) for l in lines):
                        continue
                    for s in sentences(" ".join(l.strip() for l in lines)):
                        out.append((os.path.relpath(path, root), s))
    return out


PLAIN3 = {"debian": 30, "locomo": 30, "gomod": 25, "gostd": 25, "pystd": 40}
EDGE3 = {"debian": 80, "gomod": 70, "gostd": 90, "pystd": 100}


def third(fixture, sources, prefix="third:", strata=("plain3", "edge3")):
    """Draws the third batch: the next sentences of each order (keyed
    "third:" so that it is a fresh order) that the fixture does not hold,
    PLAIN3 of any kind and EDGE3 edge sentences, at most one per Debian
    package and two per other file."""
    held = {json.loads(line)["text"] for line in open(fixture)}
    for origin, items in sources:
        items = [(w, s) for w, s in items if MIN_LEN <= len(s) <= MAX_LEN and sum(c.isalpha() for c in s) > len(s) / 2]
        uniq = {}
        for where, s in items:
            uniq.setdefault(s, where)
        per = 1 if origin == "debian" else 2
        for stratum, n, keyed, ok in ((strata[0], PLAIN3.get(origin, 0), prefix + origin, lambda s: True),
                                      (strata[1], EDGE3.get(origin, 0), prefix + "edge:" + origin, edgey)):
            out, count = [], {}
            for s in sorted(uniq, key=lambda s: key(keyed, s)):
                if len(out) >= n:
                    break
                if s in held or not ok(s) or count.get(uniq[s], 0) >= per:
                    continue
                out.append(s)
                held.add(s)
                count[uniq[s]] = count.get(uniq[s], 0) + 1
            for s in out:
                print(json.dumps({"origin": origin, "where": uniq[s], "stratum": stratum, "text": s}, ensure_ascii=False))


PLAIN4 = {"debian": 10, "locomo": 10, "gomod": 10, "gostd": 10, "pystd": 10}
EDGE4 = {"debian": 50, "gomod": 30, "gostd": 50, "pystd": 50}


def fourth(fixture, sources):
    """Draws the fourth batch like the third, ordered afresh (keys
    prefixed "fourth:"): PLAIN4 of any kind and EDGE4 edge sentences."""
    global PLAIN3, EDGE3
    PLAIN3, EDGE3 = PLAIN4, EDGE4
    third(fixture, sources, "fourth:", ("plain4", "edge4"))


PLAIN5 = {"debian": 15, "locomo": 20, "gomod": 15}
EDGE5 = {"debian": 40, "gomod": 40, "gostd": 25}


def fifth(fixture, sources):
    """Draws the fifth batch like the third, ordered afresh (keys
    prefixed "fifth:"): PLAIN5 of any kind and EDGE5 edge sentences."""
    global PLAIN3, EDGE3
    PLAIN3, EDGE3 = PLAIN5, EDGE5
    third(fixture, sources, "fifth:", ("plain5", "edge5"))


if __name__ == "__main__":
    if sys.argv[1] == "--fifth":
        fifth(sys.argv[2], (("debian", debian()), ("locomo", locomo(sys.argv[3])), ("gomod", gomod(sys.argv[4])),
                            ("gostd", gostd(sys.argv[5]))))
        sys.exit(0)
    if sys.argv[1] == "--fourth":
        fourth(sys.argv[2], (("debian", debian()), ("locomo", locomo(sys.argv[3])), ("gomod", gomod(sys.argv[4])),
                             ("gostd", gostd(sys.argv[5])), ("pystd", pystd(sys.argv[6]))))
        sys.exit(0)
    if sys.argv[1] == "--third":
        third(sys.argv[2], (("debian", debian()), ("locomo", locomo(sys.argv[3])), ("gomod", gomod(sys.argv[4])),
                            ("gostd", gostd(sys.argv[5])), ("pystd", pystd(sys.argv[6]))))
        sys.exit(0)
    if sys.argv[1] == "--second":
        second(sys.argv[2], (("debian", debian()), ("locomo", locomo(sys.argv[3])), ("gomod", gomod(sys.argv[4])),
                             ("gostd", gostd(sys.argv[5]))))
        sys.exit(0)
    draw("debian", debian(), per_group=1)
    draw("locomo", locomo(sys.argv[1]))
    draw("gomod", gomod(sys.argv[2]), per_group=4)
    draw_edges("debian", debian(), 1)
    draw_edges("gomod", gomod(sys.argv[2]), 4)
    draw_edges("gostd", gostd(sys.argv[3]), 2)
