-- src/db/migrations.rs:10

        CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at TEXT NOT NULL,
            consolidated_at TEXT,
            task_id TEXT,
            tool_name TEXT
        )
        ;

-- src/db/migrations.rs:28
CREATE INDEX IF NOT EXISTS idx_events_session_time
         ON events(session_id, created_at DESC);

-- src/db/migrations.rs:35
CREATE INDEX IF NOT EXISTS idx_events_type ON events(event_type);

-- src/db/migrations.rs:39
CREATE INDEX IF NOT EXISTS idx_events_task
         ON events(task_id) WHERE task_id IS NOT NULL;

-- src/db/migrations.rs:46
CREATE INDEX IF NOT EXISTS idx_events_consolidation
         ON events(consolidated_at) WHERE consolidated_at IS NULL;

-- src/db/migrations.rs:53
CREATE INDEX IF NOT EXISTS idx_events_prune
         ON events(created_at) WHERE consolidated_at IS NOT NULL;

-- src/db/migrations.rs:62
CREATE INDEX IF NOT EXISTS idx_events_tool_result_name_time
         ON events(tool_name, created_at DESC)
         WHERE event_type = 'tool_result' AND tool_name IS NOT NULL;

-- src/state/sqlite/migrations.rs:209
CREATE TABLE IF NOT EXISTS facts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            category TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );

-- src/state/sqlite/migrations.rs:225
ALTER TABLE facts ADD COLUMN superseded_at TEXT;

-- src/state/sqlite/migrations.rs:228
ALTER TABLE facts ADD COLUMN recall_count INTEGER DEFAULT 0;

-- src/state/sqlite/migrations.rs:231
ALTER TABLE facts ADD COLUMN last_recalled_at TEXT;

-- src/state/sqlite/migrations.rs:236
CREATE TABLE IF NOT EXISTS episodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            summary TEXT NOT NULL,
            topics TEXT,
            emotional_tone TEXT,
            outcome TEXT,
            embedding BLOB,
            importance REAL DEFAULT 0.5,
            recall_count INTEGER DEFAULT 0,
            last_recalled_at TEXT,
            message_count INTEGER,
            start_time TEXT NOT NULL,
            end_time TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

-- src/state/sqlite/migrations.rs:257
CREATE INDEX IF NOT EXISTS idx_episodes_session ON episodes(session_id);

-- src/state/sqlite/migrations.rs:262
CREATE UNIQUE INDEX IF NOT EXISTS idx_episodes_session_unique ON episodes(session_id);

-- src/state/sqlite/migrations.rs:699
ALTER TABLE facts ADD COLUMN channel_id TEXT;

-- src/state/sqlite/migrations.rs:702
ALTER TABLE facts ADD COLUMN privacy TEXT DEFAULT 'global';

-- src/state/sqlite/migrations.rs:705
CREATE INDEX IF NOT EXISTS idx_facts_channel ON facts(channel_id);

-- src/state/sqlite/migrations.rs:708
CREATE INDEX IF NOT EXISTS idx_facts_privacy ON facts(privacy);

-- src/state/sqlite/migrations.rs:712
ALTER TABLE episodes ADD COLUMN channel_id TEXT;

-- src/state/sqlite/migrations.rs:718
ALTER TABLE facts ADD COLUMN embedding BLOB;

-- src/state/sqlite/mod.rs:123
CREATE UNIQUE INDEX IF NOT EXISTS idx_facts_active_unique
         ON facts(category, key) WHERE superseded_at IS NULL;

-- src/state/sqlite/migrations.rs:1596
CREATE TABLE IF NOT EXISTS conversation_summaries (
            session_id TEXT PRIMARY KEY,
            summary TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0,
            last_message_id TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );

-- src/state/sqlite/migrations.rs:1693
DROP INDEX IF EXISTS idx_episodes_session_unique;

-- src/state/sqlite/migrations.rs:1367
CREATE TABLE IF NOT EXISTS goals (
            id TEXT PRIMARY KEY,
            description TEXT NOT NULL,
            domain TEXT NOT NULL DEFAULT 'orchestration',
            goal_type TEXT NOT NULL DEFAULT 'finite',
            status TEXT NOT NULL DEFAULT 'active',
            priority TEXT NOT NULL DEFAULT 'medium',
            conditions TEXT,
            context TEXT,
            resources TEXT,
            budget_per_check INTEGER,
            budget_daily INTEGER,
            tokens_used_today INTEGER NOT NULL DEFAULT 0,
            tokens_used_day TEXT NOT NULL DEFAULT '1970-01-01',
            last_useful_action TEXT,
            created_at TEXT NOT NULL DEFAULT (datetime('now')),
            updated_at TEXT NOT NULL DEFAULT (datetime('now')),
            completed_at TEXT,
            parent_goal_id TEXT,
            session_id TEXT NOT NULL,
            notified_at TEXT,
            notification_attempts INTEGER NOT NULL DEFAULT 0,
            dispatch_failures INTEGER NOT NULL DEFAULT 0,
            progress_notes TEXT,
            source_episode_id INTEGER REFERENCES episodes(id),
            legacy_int_id INTEGER
        );

-- src/state/sqlite/migrations.rs:1441
CREATE TABLE IF NOT EXISTS goal_schedules (
            id TEXT PRIMARY KEY,
            goal_id TEXT NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
            cron_expr TEXT NOT NULL,
            tz TEXT NOT NULL DEFAULT 'local',
            original_schedule TEXT,
            fire_policy TEXT NOT NULL DEFAULT 'coalesce',
            is_one_shot INTEGER NOT NULL DEFAULT 0,
            is_paused INTEGER NOT NULL DEFAULT 0,
            last_run_at TEXT,
            next_run_at TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (datetime('now')),
            updated_at TEXT NOT NULL DEFAULT (datetime('now'))
        );

-- src/state/sqlite/migrations.rs:1536
CREATE INDEX IF NOT EXISTS idx_goal_schedules_goal ON goal_schedules(goal_id);

-- src/state/sqlite/migrations.rs:1541
CREATE INDEX IF NOT EXISTS idx_goal_schedules_next_run
         ON goal_schedules(next_run_at) WHERE is_paused = 0;
