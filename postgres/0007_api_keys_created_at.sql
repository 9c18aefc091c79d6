-- Under a flood of failed authentications from one address, the service reads the keys
-- created since its last read (src/http/key-directory.ts), at most once a second.
create index if not exists api_keys_created_at on api_keys (created_at);
