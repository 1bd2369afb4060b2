// Package heal embeds pending records in the background: a record whose
// embedding failed (the embedder was down) or was interrupted (the
// process was killed between storing the record and its vector) waits,
// pending, for a vector, and a long-running process's healer embeds such
// records pass after pass, backing off while the embedder fails.
package heal
