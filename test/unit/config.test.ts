import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      LOUPE_OTLP_GRPC_PORT: 4317,
      LOUPE_DATA_DIR: './data',
      CLICKHOUSE_DATABASE: 'loupe',
      LOUPE_BOOTSTRAP_PLAN: 'pro',
      LOUPE_BODY_LIMIT: 10 * 1024 * 1024,
      LOG_LEVEL: 'info',
      LOUPE_REQUEST_NICE: -10,
      LOUPE_CREDENTIAL_CACHE_MS: 10_000,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.CLICKHOUSE_URL).toBeUndefined();
    expect(config.LOUPE_ADMIN_TOKEN).toBeUndefined();
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: ' ' })).toMatchObject({ PORT: 3000, DATABASE_URL: undefined });
  });

  it('turns OTLP/gRPC off with LOUPE_OTLP_GRPC_PORT=0', () => {
    expect(loadConfig({ LOUPE_OTLP_GRPC_PORT: '0' }).LOUPE_OTLP_GRPC_PORT).toBe(0);
    expect(loadConfig({ LOUPE_OTLP_GRPC_PORT: '14317' }).LOUPE_OTLP_GRPC_PORT).toBe(14317);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['LOUPE_OTLP_GRPC_PORT', '65536'],
    ['LOUPE_OTLP_GRPC_PORT', 'grpc'],
    ['DATABASE_URL', 'mysql://x'],
    ['CLICKHOUSE_URL', 'not a url'],
    ['CLICKHOUSE_DATABASE', 'a-b; drop'],
    ['LOUPE_ADMIN_TOKEN', 'short'],
    ['LOUPE_BOOTSTRAP_PLAN', 'gold'],
    ['LOUPE_BODY_LIMIT', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['LOUPE_RETENTION_DAYS', '0'],
    ['LOUPE_TRUST_PROXY', 'anyone; rm'],
    ['LOUPE_REQUEST_NICE', '5'],
    ['LOUPE_REQUEST_NICE', '-21'],
    ['LOUPE_REQUEST_NICE', 'high'],
    ['LOUPE_CREDENTIAL_CACHE_MS', '-1'],
    ['LOUPE_CREDENTIAL_CACHE_MS', '3600001'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    try {
      loadConfig({ [name]: value });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toContain(`${name}:`);
    }
  });

  it('parses the trusted proxies', () => {
    expect(loadConfig({}).LOUPE_TRUST_PROXY).toBe(false);
    expect(loadConfig({ LOUPE_TRUST_PROXY: 'true' }).LOUPE_TRUST_PROXY).toBe(true);
    expect(loadConfig({ LOUPE_TRUST_PROXY: '2' }).LOUPE_TRUST_PROXY).toBe(2);
    expect(loadConfig({ LOUPE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).LOUPE_TRUST_PROXY).toBe('10.0.0.0/8, 127.0.0.1');
  });

  it('parses servers and numbers', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/loupe',
      CLICKHOUSE_URL: 'http://ch:8123',
      LOUPE_RETENTION_DAYS: '30',
      LOUPE_BOOTSTRAP_PLAN: 'enterprise',
      LOUPE_REQUEST_NICE: '-5',
    });
    expect(config).toMatchObject({ PORT: 8080, LOUPE_RETENTION_DAYS: 30, LOUPE_BOOTSTRAP_PLAN: 'enterprise', LOUPE_REQUEST_NICE: -5 });
    expect(loadConfig({ LOUPE_REQUEST_NICE: '0' }).LOUPE_REQUEST_NICE).toBe(0);
    expect(loadConfig({ LOUPE_CREDENTIAL_CACHE_MS: '0' }).LOUPE_CREDENTIAL_CACHE_MS).toBe(0);
  });
});
