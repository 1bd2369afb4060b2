// Package embed turns text into vectors. One Embedder is chosen at start-up
// and used for every call: there is no fallback to another provider when it
// fails, so vectors of different spaces never mix.
//
// Providers: glove (the offline default, built in), ollama (an Ollama
// server's embed endpoint), openai (any OpenAI-compatible embeddings
// endpoint: OpenAI, LM Studio, llama.cpp, vLLM, TEI) and hash
// (deterministic feature hashing, for tests).
//
// Every vector is checked: the dimension the space declares, finite
// numbers. A provider that times out or answers garbage is an
// embedder_unavailable error.
package embed
