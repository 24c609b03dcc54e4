CREATE INDEX IF NOT EXISTS idx_chunks_file_id
ON chunks (file_id);
