
            CREATE TABLE IF NOT EXISTS memories (
                id TEXT PRIMARY KEY,
                text TEXT NOT NULL,
                scope TEXT NOT NULL,
                tags TEXT,
                created_at TEXT NOT NULL,
                last_accessed_at TEXT,
                ttl_seconds INTEGER,
                embedding BLOB
            )
        ;

            CREATE INDEX IF NOT EXISTS idx_memories_scope ON memories(scope)
        ;

            CREATE INDEX IF NOT EXISTS idx_memories_created_at ON memories(created_at)
        ;

            CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
                id,
                text,
                scope,
                tags,
                content='memories',
                content_rowid='rowid'
            )
        ;

            CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
                INSERT INTO memories_fts(rowid, id, text, scope, tags) 
                VALUES (new.rowid, new.id, new.text, new.scope, new.tags);
            END
        ;

            CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
                INSERT INTO memories_fts(memories_fts, rowid, id, text, scope, tags) 
                VALUES('delete', old.rowid, old.id, old.text, old.scope, old.tags);
            END
        ;

            CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
                INSERT INTO memories_fts(memories_fts, rowid, id, text, scope, tags) 
                VALUES('delete', old.rowid, old.id, old.text, old.scope, old.tags);
                INSERT INTO memories_fts(rowid, id, text, scope, tags) 
                VALUES (new.rowid, new.id, new.text, new.scope, new.tags);
            END
        ;
