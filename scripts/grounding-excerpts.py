#!/usr/bin/env python3
"""Print the source excerpts of synth/testdata/grounding/claims.txt.

The grounding fixture's sources are texts nobody here wrote: turns of
LoCoMo's conversations (stored as cairn stores them, "Speaker: text"),
entries of the Debian changelogs that installed packages ship, and
paragraphs of READMEs of Go modules in the module cache. This script
copies them word for word from where they live on the machine that made
the fixture, so anyone can check each excerpt against its origin:

    python3 scripts/grounding-excerpts.py > /tmp/sources.txt
    python3 scripts/grounding-excerpts.py --second >> /tmp/sources.txt
    python3 scripts/grounding-excerpts.py --third >> /tmp/sources.txt

and compare with the "source" blocks of claims.txt. It needs
../shared/datasets/locomo/locomo10.json (or testdata/locomo/locomo10.json),
the Debian packages listed below installed, and the Go modules in
$(go env GOMODCACHE).
"""
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LOCOMO = {
    "conv-26": ["D1:3", "D5:1", "D9:2", "D10:3", "D3:1", "D4:6", "D6:16", "D8:32", "D9:1", "D6:4", "D1:18",
                "D15:26", "D2:5", "D7:18", "D13:4", "D6:10", "D5:4", "D4:3", "D3:13", "D1:11", "D4:13", "D2:8"],
    "conv-30": ["D1:2", "D1:3", "D1:4", "D2:1", "D1:6", "D1:7"],
    "conv-41": ["D2:1", "D3:5", "D14:10", "D19:1", "D17:12", "D11:1", "D15:1", "D21:22", "D24:1", "D29:4", "D3:11",
                "D1:3", "D19:3", "D13:24", "D8:15", "D18:3", "D19:23", "D8:4", "D22:7", "D14:21", "D23:1", "D7:16"],
    "conv-42": ["D1:10", "D1:11", "D2:23", "D5:11", "D4:4", "D3:4", "D4:9", "D2:7"],
    "conv-43": ["D3:13", "D3:15", "D25:2", "D1:9", "D6:15", "D1:18", "D3:2", "D14:16"],
    "conv-44": ["D13:1", "D23:1", "D25:1", "D8:1", "D17:1", "D6:2", "D10:1", "D16:6"],
    "conv-47": ["D3:11", "D4:16", "D1:14", "D5:1", "D8:14", "D14:10"],
    "conv-48": ["D2:1", "D6:4", "D1:8", "D1:9", "D6:10", "D2:13", "D12:3", "D29:7"],
    "conv-49": ["D1:2", "D1:4", "D18:1", "D2:1", "D22:2", "D1:11"],
}

# The second batch, added to give the tune half more of each class; its
# answers were labelled before the verifier was tuned on them.
LOCOMO2 = {
    "conv-50": ["D1:2", "D2:1", "D2:8", "D2:10", "D4:1", "D4:7", "D3:7", "D3:9", "D6:3", "D6:11", "D5:5", "D4:26"],
    "conv-47": ["D1:5", "D1:7", "D1:20", "D2:10", "D2:17", "D3:9", "D4:4", "D4:6", "D3:8"],
    "conv-49": ["D2:6", "D2:11", "D3:1", "D4:1", "D4:6", "D4:10", "D5:1", "D5:7", "D5:17", "D4:15", "D3:16"],
}

DEBIAN = {
    "openssh-client": ["1:9.2p1-2+deb12u6", "1:9.2p1-2+deb12u5", "1:9.2p1-2+deb12u4", "1:9.2p1-2+deb12u3"],
    "tzdata": ["2025b-0+deb12u1", "2025a-0+deb12u1", "2024b-0+deb12u1", "2024a-0+deb12u1", "2023d-0+deb12u1"],
    "curl": ["7.88.1-10+deb12u14", "7.88.1-10+deb12u13", "7.88.1-10+deb12u12", "7.88.1-10+deb12u11"],
    "xz-utils": ["5.4.1-1", "5.4.1-0.2", "5.4.1-0.1", "5.4.0-0.1"],
    "git": ["1:2.39.5-0+deb12u3", "1:2.39.5-0+deb12u2", "1:2.39.5-0+deb12u1", "1:2.39.2-1"],
    "gnupg": ["2.2.40-1.1+deb12u2", "2.2.40-1.1+deb12u1", "2.2.40-1.1", "2.2.40-1"],
    "python3.11": ["3.11.2-6+deb12u6", "3.11.2-6+deb12u5", "3.11.2-6+deb12u4", "3.11.2-6+deb12u3"],
    "bash": ["5.2.15-2", "5.2-3", "5.2-2", "5.2-1"],
    "coreutils": ["9.1-1", "8.32-4", "8.32-3", "8.32-2"],
}

DEBIAN2 = {
    "libssl3": ["3.0.19-1~deb12u2", "3.0.17-1~deb12u3", "3.0.17-1~deb12u2", "3.0.16-1~deb12u1", "3.0.15-1~deb12u1"],
    "libxml2": ["2.9.14+dfsg-1.3~deb12u5", "2.9.14+dfsg-1.3~deb12u4", "2.9.14+dfsg-1.3~deb12u3", "2.9.14+dfsg-1.3",
                "2.9.14+dfsg-1.2"],
    "tar": ["1.34+dfsg-1.2+deb12u1", "1.34+dfsg-1.2", "1.32+dfsg-1"],
    "wget": ["1.21.3-1+deb12u1", "1.21-1"],
    "gzip": ["1.12-1"],
}

# README paragraphs: (module directory in the module cache, short name,
# the opening words of each paragraph taken; a trailing "+" takes the
# block after the paragraph too, a list the paragraph introduces).
READMES = [
    ("github.com/spf13/cobra@v1.10.2/README.md", "cobra", [
        "Cobra is a library for creating", "Cobra is a library providing", "Cobra is built on a structure",
        "A flag is a way to modify", "Flag functionality is provided by"]),
    ("github.com/tetratelabs/wazero@v1.12.0/README.md", "wazero", [
        "wazero is a WebAssembly Core Specification", "Interpreter is a naive", "Compiler compiles WebAssembly",
        "wazero's [1.0 release][8]", "wazero has no dependencies and doesn't require CGO", "We verify zero dependencies"]),
    ("github.com/pkoukk/tiktoken-go@v0.1.8/README.md", "tiktoken-go", [
        "Tiktoken is a fast BPE", "Tiktoken-go has the same cache", "If you don't want to use cache",
        "The offline BPE loader loads"]),
    ("github.com/dustin/go-humanize@v1.0.1/README.markdown", "go-humanize", [
        "This lets you take numbers like", "This lets you take a `time.Time`", "Thanks to Kyle Lemons",
        "Nicer float64 formatter"]),
    ("github.com/klauspost/compress@v1.17.9/README.md", "compress", [
        "This package provides various compression algorithms.+", "* Feb 5th, 2024", "* Jan 26th, 2024", "* Dec 1st, 2023"]),
    ("github.com/kljensen/snowball@v0.10.0/README.md", "snowball", [
        "* In order to ensure the code", "* In order to avoid casting", "* The code does not use any maps",
        "I'd like to implement the Snowball"]),
    ("github.com/pgvector/pgvector-go@v0.3.0/README.md", "pgvector-go", [
        "Supports [pgx]", "Or check out some examples:+"]),
    ("github.com/modelcontextprotocol/go-sdk@v1.8.0/README.md", "mcp-go-sdk", [
        "This repository contains an implementation", "The SDK endeavors to implement",
        "The roots, sampling, and logging features", "New releases of the SDK target"]),
]

READMES2 = [
    ("github.com/oklog/ulid/v2@v2.1.2/README.md", "ulid", [
        "A GUID/UUID can be suboptimal+", "A ULID however:+", "ULIDs are constructed from two things", "Random data is taken from"]),
    ("github.com/dlclark/regexp2@v1.10.0/README.md", "regexp2", [
        "Regexp2 is a feature-rich", "The engine is ported from", "The internals of `regexp2`", "The only error that"]),
    ("github.com/hashicorp/golang-lru/v2@v2.0.7/README.md", "golang-lru", ["This provides the `lru` package"]),
    ("github.com/rivo/uniseg@v0.4.7/README.md", "uniseg", [
        "This Go package implements", "This package provides tools to iterate", "Line breaking, also known as"]),
]

# The third batch, a held-out set: labelled and committed before the
# verifier was run on it, and never tuned on.
LOCOMO3 = {
    "conv-30": ["D18:2", "D8:13", "D17:4", "D18:13", "D8:4", "D9:5"],
    "conv-42": ["D21:1", "D21:4", "D22:9", "D19:1", "D28:25", "D18:8"],
    "conv-43": ["D27:4", "D12:4", "D24:14", "D26:21", "D8:3", "D17:9"],
    "conv-44": ["D15:5", "D22:7", "D19:2", "D22:1", "D8:7", "D21:7"],
}

DEBIAN3 = {
    "libexpat1": ["2.5.0-1+deb12u1", "2.5.0-1", "2.4.8-2", "2.4.7-1"],
    "libsqlite3-0": ["3.40.1-2+deb12u2", "3.40.1-2+deb12u1", "3.40.1-2", "3.40.0-2"],
    "less": ["590-2.1~deb12u2", "590-2.1", "590-1.2", "590-2"],
    "unzip": ["6.0-27", "6.0-26", "6.0-25", "6.0-24"],
    "libzstd1": ["1.5.4+dfsg2-5", "1.5.4+dfsg2-3", "1.5.4+dfsg2-2", "1.5.2+dfsg2-3"],
}

READMES3 = [
    ("github.com/andybalholm/brotli@v1.1.1/README.md", "brotli", [
        "This package is a brotli compressor", "I have been working on new compression", "I am using it in production"]),
    ("github.com/google/uuid@v1.6.0/README.md", "uuid", ["The uuid package generates", "This package is based on"]),
    ("github.com/jmoiron/sqlx@v1.3.5/README.md", "sqlx", [
        "sqlx is a library which provides", "Major additional concepts are:+", "`BindDriver` allows users to control",
        "Compatibility with the most recent two versions"]),
    ("github.com/lib/pq@v1.10.9/README.md", "pq", ["This package is currently in maintenance mode", "For users that require new features"]),
    ("github.com/google/go-cmp@v0.7.0/README.md", "go-cmp", [
        "This package is intended to be a more powerful", "* When the default behavior of equality",
        "* If no custom equality functions are used"]),
]


def locomo(convs=LOCOMO):
    path = os.path.join(ROOT, "..", "shared", "datasets", "locomo", "locomo10.json")
    if not os.path.exists(path):
        path = os.path.join(ROOT, "testdata", "locomo", "locomo10.json")
    data = {c["sample_id"]: c for c in json.load(open(path))}
    for conv, ids in convs.items():
        turns = {}
        for k, v in data[conv]["conversation"].items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    turns[t["dia_id"]] = t
        for d in ids:
            t = turns[d]
            text = t["speaker"] + ": " + t["text"]
            if t.get("blip_caption"):
                text += " [shared an image: " + t["blip_caption"] + "]"
            yield f"locomo/{conv}/{d}", f"LoCoMo {conv} {d}", text


def debian(pkgs=DEBIAN):
    for pkg, versions in pkgs.items():
        lines = gzip.open(f"/usr/share/doc/{pkg}/changelog.Debian.gz", "rt").read().split("\n")
        for ver in versions:
            start = next(i for i, l in enumerate(lines) if l and not l.startswith(" ") and f"({ver})" in l)
            end = next(i for i in range(start, len(lines)) if lines[i].startswith(" -- "))
            src = lines[start].split(" ")[0]
            yield f"debian/{src}/{ver}", f"/usr/share/doc/{pkg}/changelog.Debian.gz", "\n".join(l.rstrip() for l in lines[start:end + 1])


def readmes(files=READMES):
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    for rel, name, openings in files:
        lines = open(os.path.join(cache, rel)).read().split("\n")
        for n, opening in enumerate(openings, 1):
            more = opening.endswith("+")
            opening = opening.rstrip("+")
            start = next(i for i, l in enumerate(lines) if l.startswith(opening))
            end = start
            for block in range(2 if more else 1):
                if block:
                    end += 1
                    while end < len(lines) and not lines[end].strip():
                        end += 1
                # A paragraph ends at a blank line; a list item at the next
                # item of its own level.
                while end + 1 < len(lines) and lines[end + 1].strip() and not (
                        opening.startswith("* ") and lines[end + 1].startswith("* ")):
                    end += 1
            yield f"readme/{name}/{n}", f"{rel} line {start + 1}", "\n".join(l.rstrip() for l in lines[start:end + 1])


def main():
    gens = [locomo, debian, readmes]
    if sys.argv[1:] == ["--second"]:
        gens = [lambda: locomo(LOCOMO2), lambda: debian(DEBIAN2), lambda: readmes(READMES2)]
    if sys.argv[1:] == ["--third"]:
        gens = [lambda: locomo(LOCOMO3), lambda: debian(DEBIAN3), lambda: readmes(READMES3)]
    for gen in gens:
        for sid, origin, text in gen():
            print(f"source {sid} | {origin}")
            for line in text.split("\n"):
                print("> " + line if line else ">")
            print()


if __name__ == "__main__":
    sys.exit(main())
