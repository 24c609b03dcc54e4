-- The memory store: sessions, events, state, indexed chunks (FTS5 + vectors), schedules.
-- Names and types follow the Oxydra agent's memory database so its files open as they are.
-- Every statement is IF NOT EXISTS: applying this to a compatible store that lacks the tracking row is harmless.

CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    agent_identity TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_sessions_updated_at ON sessions (updated_at DESC);

CREATE TABLE IF NOT EXISTS conversation_events (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (session_id, sequence)
);
CREATE INDEX IF NOT EXISTS idx_conversation_events_session_sequence
    ON conversation_events (session_id, sequence);

CREATE TABLE IF NOT EXISTS session_state (
    session_id TEXT PRIMARY KEY REFERENCES sessions (session_id) ON DELETE CASCADE,
    state_json TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS files (
    file_id INTEGER PRIMARY KEY,
    session_id TEXT REFERENCES sessions (session_id) ON DELETE CASCADE,
    source_uri TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (session_id, source_uri, content_hash)
);
CREATE INDEX IF NOT EXISTS idx_files_session_source_uri ON files (session_id, source_uri);

CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    session_id TEXT REFERENCES sessions (session_id) ON DELETE CASCADE,
    file_id INTEGER REFERENCES files (file_id) ON DELETE SET NULL,
    sequence_start INTEGER,
    sequence_end INTEGER,
    chunk_text TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_chunks_session_created_at ON chunks (session_id, created_at DESC);
CREATE INDEX IF NOT EXISTS idx_chunks_file_id ON chunks (file_id);
CREATE INDEX IF NOT EXISTS idx_chunks_session_content_hash ON chunks (session_id, content_hash);

CREATE TABLE IF NOT EXISTS chunks_vec (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks (chunk_id) ON DELETE CASCADE,
    embedding_blob BLOB NOT NULL,
    embedding_model TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
    chunk_id UNINDEXED,
    session_id UNINDEXED,
    chunk_text,
    tokenize = 'unicode61'
);

CREATE TRIGGER IF NOT EXISTS trg_chunks_fts_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, chunk_id, session_id, chunk_text)
    VALUES (new.rowid, new.chunk_id, new.session_id, new.chunk_text);
END;

CREATE TRIGGER IF NOT EXISTS trg_chunks_fts_au AFTER UPDATE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
    INSERT INTO chunks_fts (rowid, chunk_id, session_id, chunk_text)
    VALUES (new.rowid, new.chunk_id, new.session_id, new.chunk_text);
END;

CREATE TRIGGER IF NOT EXISTS trg_chunks_fts_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;

CREATE TABLE IF NOT EXISTS schedules (
    schedule_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT,
    goal TEXT NOT NULL,
    cadence_json TEXT NOT NULL,
    notification_policy TEXT NOT NULL DEFAULT 'always',
    status TEXT NOT NULL DEFAULT 'active',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    next_run_at TEXT,
    last_run_at TEXT,
    last_run_status TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    channel_id TEXT,
    channel_context_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_schedules_user_id ON schedules (user_id);
CREATE INDEX IF NOT EXISTS idx_schedules_due ON schedules (next_run_at)
    WHERE status = 'active' AND next_run_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_schedules_status ON schedules (user_id, status);
CREATE INDEX IF NOT EXISTS idx_schedules_name ON schedules (user_id, name);

CREATE TABLE IF NOT EXISTS schedule_runs (
    run_id TEXT PRIMARY KEY,
    schedule_id TEXT NOT NULL REFERENCES schedules (schedule_id) ON DELETE CASCADE,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    status TEXT NOT NULL,
    output_summary TEXT,
    output TEXT,
    turn_count INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0.0,
    notified INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_schedule_runs_lookup ON schedule_runs (schedule_id, started_at DESC);
