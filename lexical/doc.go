// Package lexical is cairn's text analysis and BM25: an analyzer (NFKC,
// lowercase, words of letters and digits, English stopwords out, Porter2
// stemming, labels) that the retrieval index (package index) and queries
// share, the BM25 parameters, and a small in-memory inverted index that
// code memory searches entities with. The local-fts provider keeps FTS5's
// own analysis and bm25.
package lexical
