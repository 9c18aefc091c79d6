import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/stores/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL on which each test file creates its own database. */
    postgresUrl: string;
    /** A ClickHouse server URL; empty means the embedded engine. */
    clickhouseUrl: string;
    /** A directory for this run's embedded data, removed when the run ends. */
    scratchDir: string;
  }
}

async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Picks the stores the suite runs on: servers named by LOUPE_TEST_DATABASE_URL and
 * LOUPE_TEST_CLICKHOUSE_URL; containers when LOUPE_TEST_CONTAINERS=1 and a Docker engine
 * answers; otherwise embedded PostgreSQL (one server for the run) and the embedded
 * ClickHouse engine (one directory per test process).
 */
export default async function setup(project: TestProject) {
  const stops: Array<() => Promise<unknown>> = [];
  let postgresUrl = process.env.LOUPE_TEST_DATABASE_URL ?? '';
  let clickhouseUrl = process.env.LOUPE_TEST_CLICKHOUSE_URL ?? '';

  if (process.env.LOUPE_TEST_CONTAINERS === '1') {
    if (await dockerAnswers()) {
      const { GenericContainer, Wait } = await import('testcontainers');
      if (!clickhouseUrl) {
        const ch = await new GenericContainer('clickhouse/clickhouse-server:latest')
          .withExposedPorts(8123)
          .withEnvironment({ CLICKHOUSE_SKIP_USER_SETUP: '1' })
          .withWaitStrategy(Wait.forHttp('/ping', 8123))
          .start();
        stops.push(() => ch.stop());
        clickhouseUrl = `http://${ch.getHost()}:${ch.getMappedPort(8123)}`;
      }
      if (!postgresUrl) {
        const pg = await new GenericContainer('postgres:16')
          .withExposedPorts(5432)
          .withEnvironment({ POSTGRES_PASSWORD: 'loupe', POSTGRES_USER: 'loupe' })
          .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
          .start();
        stops.push(() => pg.stop());
        postgresUrl = `postgres://loupe:loupe@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
      }
    } else {
      console.warn('LOUPE_TEST_CONTAINERS=1 but no Docker engine answers: the suite uses the embedded engines.');
    }
  }

  if (!postgresUrl) {
    const dir = mkdtempSync(path.join(tmpdir(), 'loupe-test-pg-'));
    const server = await startEmbeddedPostgres(path.join(dir, 'pg'));
    stops.push(async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    postgresUrl = server.url;
  }

  // Every test process puts its embedded ClickHouse directory in here; the run removes it all.
  const scratchDir = mkdtempSync(path.join(tmpdir(), 'loupe-test-'));
  stops.push(async () => rmSync(scratchDir, { recursive: true, force: true }));

  project.provide('scratchDir', scratchDir);
  project.provide('postgresUrl', postgresUrl);
  project.provide('clickhouseUrl', clickhouseUrl);
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
