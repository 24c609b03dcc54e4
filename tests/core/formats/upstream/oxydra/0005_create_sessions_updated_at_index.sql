CREATE INDEX IF NOT EXISTS idx_sessions_updated_at
ON sessions (updated_at DESC);
