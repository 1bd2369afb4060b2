// The entry points cairn adds to the tree-sitter runtime and grammars when
// scripts/gen-treesitter.sh compiles them to WebAssembly: parse a file and
// hand back its syntax tree as one flat array, so that the Go side reads
// the whole tree with one call instead of one call per node.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_sitter/api.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_javascript(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);
const TSLanguage *tree_sitter_rust(void);
const TSLanguage *tree_sitter_java(void);
const TSLanguage *tree_sitter_c(void);

#define EXPORT(name) __attribute__((export_name(#name))) name

// language returns the grammar numbered id (the order of
// internal/treesitter's Language constants), or NULL.
static const TSLanguage *language(uint32_t id) {
  switch (id) {
  case 1: return tree_sitter_python();
  case 2: return tree_sitter_javascript();
  case 3: return tree_sitter_typescript();
  case 4: return tree_sitter_tsx();
  case 5: return tree_sitter_rust();
  case 6: return tree_sitter_java();
  case 7: return tree_sitter_c();
  }
  return NULL;
}

void *EXPORT(cairn_malloc)(uint32_t n) { return malloc(n); }

void EXPORT(cairn_free)(void *p) { free(p); }

// cairn_symbol_count and cairn_symbol_name give a grammar's node kinds by
// number; cairn_field_count and cairn_field_name its field names (1-based).
uint32_t EXPORT(cairn_symbol_count)(uint32_t lang) {
  const TSLanguage *l = language(lang);
  return l ? ts_language_symbol_count(l) : 0;
}

const char *EXPORT(cairn_symbol_name)(uint32_t lang, uint32_t sym) {
  const TSLanguage *l = language(lang);
  return l ? ts_language_symbol_name(l, (TSSymbol)sym) : NULL;
}

uint32_t EXPORT(cairn_field_count)(uint32_t lang) {
  const TSLanguage *l = language(lang);
  return l ? ts_language_field_count(l) : 0;
}

const char *EXPORT(cairn_field_name)(uint32_t lang, uint32_t field) {
  const TSLanguage *l = language(lang);
  return l ? ts_language_field_name_for_id(l, (TSFieldId)field) : NULL;
}

// CairnNode is one visible node of a tree, 16 bytes, little-endian.
typedef struct {
  uint16_t symbol;  // its kind (ts_node_symbol); 0xFFFF for ERROR
  uint8_t field;    // the field it fills in its parent, 0 for none
  uint8_t flags;    // CAIRN_NAMED | CAIRN_MISSING | CAIRN_EXTRA | CAIRN_HAS_ERROR
  uint32_t start;   // byte offsets of its text, end exclusive
  uint32_t end;
  uint32_t next;    // index of the first node after its subtree
} CairnNode;

enum { CAIRN_NAMED = 1, CAIRN_MISSING = 2, CAIRN_EXTRA = 4, CAIRN_HAS_ERROR = 8 };

// CairnResult is what cairn_parse reports besides the node count.
typedef struct {
  CairnNode *nodes;     // the nodes, the module's until the next call
  uint32_t checks;        // progress checks the parse made (one per 100 operations)
  uint32_t error_checks;  // those made while every parse stack was in error
  uint32_t errors;        // how many times a check found the parse in error after one that did not
  uint32_t stopped_at;    // where a parse over its budget stopped, else UINT32_MAX
} CairnResult;

static CairnNode *nodes;
static uint32_t nodes_cap;
static uint32_t *open_nodes;
static uint32_t open_cap;
static uint32_t checks, error_checks, errors, budget, stopped_at;
static bool in_error;

// grow makes room for n+1 entries in *buf of *cap; false when memory is
// exhausted.
static int grow(void **buf, uint32_t *cap, uint32_t n, size_t size) {
  if (n < *cap) return 1;
  uint32_t c = *cap ? *cap * 2 : 4096;
  void *b = realloc(*buf, (size_t)c * size);
  if (!b) return 0;
  *buf = b;
  *cap = c;
  return 1;
}

// StringInput is a file in memory, read as ts_parser_parse_string does.
typedef struct {
  const char *src;
  uint32_t len;
} StringInput;

static const char *read_string(void *payload, uint32_t byte, TSPoint point, uint32_t *bytes_read) {
  (void)point;
  StringInput *in = payload;
  if (byte >= in->len) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read = in->len - byte;
  return in->src + byte;
}

// progress stops a parse that has spent more checks than its budget in
// error recovery, which costs far more per operation than parsing.
static bool progress(TSParseState *state) {
  checks++;
  if (state->has_error && !in_error) errors++;
  in_error = state->has_error;
  if (!state->has_error || ++error_checks <= budget) return false;
  stopped_at = state->current_byte_offset;
  return true;
}

// cairn_parse parses the len bytes at src with grammar lang, stopping
// after max_error_checks progress checks in error recovery (tree-sitter
// checks every 100 operations), and lists the tree's visible
// nodes in pre-order (a node, then its children's subtrees in order) in
// res->nodes. It returns how many nodes there are: 0 when the grammar is
// unknown or there is no tree (res->stopped_at says where a parse over
// its budget stopped), and UINT32_MAX when memory ran out.
uint32_t EXPORT(cairn_parse)(uint32_t lang, const char *src, uint32_t len, uint32_t max_error_checks, CairnResult *res) {
  res->nodes = NULL;
  res->stopped_at = UINT32_MAX;
  const TSLanguage *l = language(lang);
  if (!l) return 0;
  // A new parser each time: tree-sitter checks progress every 100
  // operations counted across parses, so a reused parser would check (and
  // stop) at places that depend on the files parsed before.
  TSParser *parser = ts_parser_new();
  if (!ts_parser_set_language(parser, l)) {
    ts_parser_delete(parser);
    return 0;
  }
  checks = error_checks = errors = 0;
  in_error = false;
  budget = max_error_checks;
  stopped_at = UINT32_MAX;
  StringInput text = {src, len};
  TSInput input = {.payload = &text, .read = read_string, .encoding = TSInputEncodingUTF8};
  TSParseOptions options = {.payload = NULL, .progress_callback = progress};
  TSTree *tree = ts_parser_parse_with_options(parser, NULL, input, options);
  ts_parser_delete(parser);
  res->checks = checks;
  res->error_checks = error_checks;
  res->errors = errors;
  res->stopped_at = stopped_at;
  if (!tree) return 0;
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
  uint32_t n = 0, depth = 0;
  int ok = 1, done = 0;
  while (ok && !done) {
    if (!grow((void **)&nodes, &nodes_cap, n, sizeof(CairnNode)) ||
        !grow((void **)&open_nodes, &open_cap, depth, sizeof(uint32_t))) {
      ok = 0;
      break;
    }
    TSNode node = ts_tree_cursor_current_node(&c);
    CairnNode *d = &nodes[n];
    d->symbol = ts_node_symbol(node);
    d->field = (uint8_t)ts_tree_cursor_current_field_id(&c);
    d->flags = (ts_node_is_named(node) ? CAIRN_NAMED : 0) | (ts_node_is_missing(node) ? CAIRN_MISSING : 0) |
               (ts_node_is_extra(node) ? CAIRN_EXTRA : 0) | (ts_node_has_error(node) ? CAIRN_HAS_ERROR : 0);
    d->start = ts_node_start_byte(node);
    d->end = ts_node_end_byte(node);
    d->next = 0;
    open_nodes[depth] = n++;
    if (ts_tree_cursor_goto_first_child(&c)) {
      depth++;
      continue;
    }
    // Close this node, and each ancestor whose last child it ends.
    for (;;) {
      nodes[open_nodes[depth]].next = n;
      if (ts_tree_cursor_goto_next_sibling(&c)) break;
      if (depth == 0 || !ts_tree_cursor_goto_parent(&c)) {
        done = 1;
        break;
      }
      depth--;
    }
  }
  ts_tree_cursor_delete(&c);
  ts_tree_delete(tree);
  if (!ok) return UINT32_MAX;
  res->nodes = nodes;
  return n;
}
