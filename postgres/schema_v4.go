package postgres

// schemaV4 gives inner_voice's sessions a scope and a current flag that a
// unique index holds to at most one session per scope, as the SQLite
// store's version 11 does: the sessions of older versions are unscoped;
// the one of the latest interaction (the active session before) becomes
// current, the others are ended (several may have looked active, two
// first calls having raced). Each statement may run again.
func schemaV4(vectorMode, int32) string {
	return `
ALTER TABLE inner_voice_sessions ADD COLUMN IF NOT EXISTS session_id text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS repo_id text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS agent_id text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS user_id text COLLATE "C" NOT NULL DEFAULT '',
	ADD COLUMN IF NOT EXISTS active boolean NOT NULL DEFAULT false;
UPDATE inner_voice_sessions SET active = true
WHERE seq = (SELECT seq FROM inner_voice_sessions ORDER BY last_interaction DESC, created_at DESC, id DESC LIMIT 1)
	AND NOT EXISTS (SELECT 1 FROM inner_voice_sessions WHERE active);
CREATE UNIQUE INDEX IF NOT EXISTS inner_voice_sessions_current ON inner_voice_sessions(session_id, repo_id, agent_id, user_id)
	WHERE active;
`
}
