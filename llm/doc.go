// Package llm holds cairn's clients for large language models behind one
// interface, Client: OpenAI-compatible chat completions (OpenAI, Ollama's
// /v1, vLLM, the llama.cpp server, LM Studio), Ollama's native /api/chat,
// Gemini's generateContent and Anthropic's Messages API.
//
// Every client bounds a call with a timeout, retries 429 and 5xx answers
// and network failures a bounded number of times with backoff (honouring
// Retry-After; the wait is injectable so tests never sleep), asks for JSON
// in the shape of a JSON Schema where the API offers it, refuses a prompt
// that would not fit the model's context window before sending anything,
// counts tokens (tiktoken's BPE for OpenAI models, an estimate for the
// others) and prices a call from a per-model table that configuration can
// override.
//
// API keys come from the environment only (SettingsFromEnv names the
// variables per provider). A key is held as a Secret, which prints as
// "[redacted]", is sent only in a request header and is scrubbed from
// anything a provider answers before it reaches an error's cause. Errors a
// caller sees are cairn's typed errors: invalid_params for a prompt or a
// setting that cannot work, feature_disabled when no model is configured,
// and CodeUnavailable when the provider failed; their messages hold no
// address, host, key or provider-written text.
package llm
