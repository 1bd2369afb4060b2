#!/usr/bin/env bash
# Regenerates internal/treesitter/parsers: the tree-sitter runtime and the
# Python, JavaScript, TypeScript, TSX, Rust, Java and C grammars, compiled
# to one WebAssembly module (wasm32-wasi) with scripts/treesitter/cairn.c,
# then translated to Go by wasm2go, so that the default CGO_ENABLED=0
# build parses those languages without a C compiler.
#
# Inputs are pinned below by module version and go.sum hash (go mod
# download checks them against the checksum database); the script also
# records the SHA-256 of every C file it compiles, of itself and of
# cairn.c, and of what it writes, in internal/treesitter/parsers/MANIFEST.
# internal/treesitter's tests check the committed files against that
# manifest, so a hand edit of the generated code, or a change here without
# regenerating, fails them.
#
# Needs Go, and Debian's clang, lld and wasi-libc (packages clang lld
# wasi-libc libclang-rt-14-dev-wasm32). Run from anywhere; JOBS=n compiles
# n files at a time (default 2); KEEP_WASM=file keeps a copy of the
# WebAssembly module (for scripts/treesitter/routes).
set -euo pipefail
cd "$(dirname "$0")/.."

out=internal/treesitter/parsers
glue=scripts/treesitter/cairn.c
jobs=${JOBS:-2}

# module, version, go.sum hash
modules=(
  "github.com/tree-sitter/go-tree-sitter v0.25.0 h1:sx6kcg8raRFCvc9BnXglke6axya12krCJF5xJ2sftRU="
  "github.com/tree-sitter/tree-sitter-python v0.25.0 h1:O6XD9v8U1LOcRc3cNj9nM7XufrtEBezE6VrpRrHZDf0="
  "github.com/tree-sitter/tree-sitter-javascript v0.25.0 h1:ZkWETb66/w8cc13yhfnNuHOLDQWl3BnKlH6f9AdR88c="
  "github.com/tree-sitter/tree-sitter-typescript v0.23.2 h1:/Odvphn18PniVixb9e97X0DbNVsU6Qocv9mfkyzdXwU="
  "github.com/tree-sitter/tree-sitter-rust v0.24.0 h1:nr3ga5ThXyPR5n/DiMq4Zh3e8pMR+sfzk088QE809+g="
  "github.com/tree-sitter/tree-sitter-java v0.23.5 h1:J9YeMGMwXYlKSP3K4Us8CitC6hjtMjqpeOf2GGo6tig="
  "github.com/tree-sitter/tree-sitter-c v0.24.1 h1:GV9DjvIV6uYe3W/JBKMFwE4hJcRxzRDq63llxNFHOkY="
  "github.com/ncruces/wasm2go v0.4.21 h1:F9xQyNnXIjWesQgt7tLxqVUg2pmxwBOrRCLpEFv3QUc="
)

for tool in clang go sha256sum; do
  command -v "$tool" >/dev/null || { echo "gen-treesitter: $tool is missing" >&2; exit 1; }
done
[ -f /usr/lib/wasm32-wasi/crt1-reactor.o ] || { echo "gen-treesitter: wasi-libc is missing (apt-get install wasi-libc libclang-rt-14-dev-wasm32 lld)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A dir
for m in "${modules[@]}"; do
  read -r path version sum <<<"$m"
  info=$(GOFLAGS=-mod=mod go mod download -json "$path@$version")
  got=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$info")
  if [ "$got" != "$sum" ]; then
    echo "gen-treesitter: $path@$version has sum $got, want $sum" >&2; exit 1
  fi
  dir[$path]=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")
done
rt=${dir[github.com/tree-sitter/go-tree-sitter]}
ts=${dir[github.com/tree-sitter/tree-sitter-typescript]}

# grammar name, source directory
grammars=(
  "python ${dir[github.com/tree-sitter/tree-sitter-python]}/src"
  "javascript ${dir[github.com/tree-sitter/tree-sitter-javascript]}/src"
  "typescript $ts/typescript/src"
  "tsx $ts/tsx/src"
  "rust ${dir[github.com/tree-sitter/tree-sitter-rust]}/src"
  "java ${dir[github.com/tree-sitter/tree-sitter-java]}/src"
  "c ${dir[github.com/tree-sitter/tree-sitter-c]}/src"
)

# The flags of go-tree-sitter's cgo build, for wasm32-wasi as a reactor
# (a library: no main), with assertions off (an assertion would trap).
cflags=(--target=wasm32-wasi -O2 -std=c11 -D_POSIX_C_SOURCE=200112L -D_DEFAULT_SOURCE -DHAVE_ENDIAN_H -DNDEBUG
  -mbulk-memory -msign-ext -mnontrapping-fptoint -w)

# Each line: object, include directory, source.
{
  echo "$tmp/runtime.o $rt/src $rt/src/lib.c"
  echo "$tmp/cairn.o $rt/include $PWD/$glue"
  for g in "${grammars[@]}"; do
    read -r name src <<<"$g"
    for f in parser scanner; do
      [ -f "$src/$f.c" ] && echo "$tmp/$name-$f.o $src $src/$f.c"
    done
  done
} >"$tmp/units"

echo "compiling $(wc -l <"$tmp/units") files with $(clang --version | head -1)"
running=0
while read -r obj inc src; do
  clang "${cflags[@]}" -I"$rt/include" -I"$inc" -c "$src" -o "$obj" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done <"$tmp/units"
while [ "$running" -gt 0 ]; do
  wait -n
  running=$((running - 1))
done

# The C stack comes first in memory, so that overflowing it traps (an
# access below address 0) instead of overwriting the data after it.
clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all -Wl,--stack-first -Wl,-z,stack-size=1048576 \
  -o "$tmp/parsers.wasm" "$tmp"/*.o

if [ -n "${KEEP_WASM:-}" ]; then cp "$tmp/parsers.wasm" "$KEEP_WASM"; fi

GOBIN="$tmp/bin" GOFLAGS=-mod=mod go install github.com/ncruces/wasm2go@v0.4.21
mkdir -p "$out"
"$tmp/bin/wasm2go" -unsafe -embed -pkg parsers -o "$out/parsers.go" "$tmp/parsers.wasm"
gofmt -w "$out/parsers.go"

# Licences of everything the module holds.
{
  for m in "${modules[@]}"; do
    read -r path version _ <<<"$m"
    echo "==== $path $version"
    cat "${dir[$path]}/LICENSE"
    echo
  done
  echo "==== wasi-libc (Debian package $(dpkg-query -W -f='${Version}' wasi-libc 2>/dev/null || echo unknown)): malloc, memcpy and the other C library functions linked in"
  cat /usr/share/doc/wasi-libc/copyright
  echo
  echo "==== compiler-rt builtins (Debian package libclang-rt-14-dev-wasm32)"
  cat /usr/share/doc/libclang-rt-14-dev-wasm32/copyright 2>/dev/null || echo "Apache-2.0 WITH LLVM-exception"
} >"$out/LICENSES"

sum() { sha256sum "$1" | cut -d' ' -f1; }
{
  echo "# Generated by scripts/gen-treesitter.sh. DO NOT EDIT."
  echo "# Each line: kind, SHA-256, name. The test in internal/treesitter/parsers"
  echo "# checks the script, cairn.c and the outputs against it."
  echo "tool - $(clang --version | head -1)"
  echo "tool - wasi-libc $(dpkg-query -W -f='${Version}' wasi-libc 2>/dev/null || echo unknown)"
  for m in "${modules[@]}"; do
    read -r path version hash <<<"$m"
    echo "module $hash $path@$version"
  done
  echo "script $(sum scripts/gen-treesitter.sh) scripts/gen-treesitter.sh"
  echo "script $(sum "$glue") $glue"
  while read -r _ _ src; do
    case "$src" in "$PWD"/*) continue ;; esac
    echo "input $(sum "$src") ${src#"${dir[github.com/tree-sitter/go-tree-sitter]%/*}/"}"
  done <"$tmp/units"
  echo "wasm $(sum "$tmp/parsers.wasm") parsers.wasm"
  for f in parsers.go parsers.dat LICENSES; do
    echo "output $(sum "$out/$f") $f"
  done
} >"$out/MANIFEST"
cat "$out/MANIFEST"
