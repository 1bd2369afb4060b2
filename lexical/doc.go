// Package lexical is cairn's in-memory full-text index: an analyzer
// (NFKC, lowercase, words of letters and digits, English stopwords out,
// Porter2 stemming) and an inverted index scored with BM25. It serves the
// hybrid retrieval provider, which needs every matching document's score
// (to share scores with neighbouring turns) at a speed SQLite's FTS5 cannot
// give for large memories; the local-fts provider keeps FTS5's exact bm25.
//
// Documents have dense ids given by the caller; removed documents leave the
// statistics (document count, lengths, document frequencies) as if never
// added.
package lexical
