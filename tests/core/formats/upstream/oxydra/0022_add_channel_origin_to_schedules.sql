ALTER TABLE schedules ADD COLUMN channel_id TEXT;
ALTER TABLE schedules ADD COLUMN channel_context_id TEXT;
