#!/usr/bin/env bash
# Rebuilds synth/lexicon/wordnet.txt.gz, the word knowledge of the grounding
# verifier (synonyms, antonyms, parts of speech, irregular forms), from
# WordNet 3.0 as Debian's wordnet-base package installs it. Needs
# `apt-get install wordnet-base` and Go. Run from the repository root.
set -euo pipefail
dict=${WORDNET_DICT:-/usr/share/wordnet}
go run ./synth/lexicon/gen -dict "$dict" -out synth/lexicon/wordnet.txt.gz
sha256sum synth/lexicon/wordnet.txt.gz
