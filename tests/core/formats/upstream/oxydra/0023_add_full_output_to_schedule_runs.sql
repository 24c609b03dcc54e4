ALTER TABLE schedule_runs ADD COLUMN output TEXT;
