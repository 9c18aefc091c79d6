import type { ChildProcess } from 'node:child_process';

/**
 * Restarts of the embedded PostgreSQL when it stops while the service runs (killed, crashed):
 * a bounded number of attempts with a growing delay, each attempt and the outcome logged. While
 * it is down, `condition` says so, so that requests fail fast and `/healthz` names it
 * (docs/decisions/091-store-outages.md); after the last attempt it stays down and says so.
 */

/** How many restarts to try, and the delay before each (the first, doubled each time, at most the last). */
export interface RestartPolicy {
  attempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/** Six attempts over about 16 s: enough for the killed server's leftover processes to exit. */
export const defaultRestartPolicy: RestartPolicy = { attempts: 6, firstDelayMs: 250, maxDelayMs: 8_000 };

export type ServerCondition =
  | { state: 'up' }
  | { state: 'restarting'; reason: string; attempt: number; attempts: number; nextAttemptAt: number }
  | { state: 'down'; reason: string };

/** Where the restarts are told (the service's logger). */
export interface RestartLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export class ServerRestarts {
  private current: ServerCondition = { state: 'up' };
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;

  constructor(
    private readonly what: string,
    /** Starts the server again; resolves with its process once it accepts connections, rejects when it does not start. */
    private readonly launch: () => Promise<ChildProcess>,
    private readonly log: RestartLog,
    private readonly policy: RestartPolicy = defaultRestartPolicy,
  ) {}

  /** Watches a running server: when it exits unasked, the restarts begin. */
  watch(child: ChildProcess): void {
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      const reason = `${this.what} stopped (${signal ? `signal ${signal}` : `exit code ${code}`})`;
      this.log.error({ pid: child.pid, code, signal }, `${reason}; restarting it`);
      this.schedule(1, reason);
    });
  }

  condition(): ServerCondition {
    return this.current;
  }

  /** No restart after this; one under way is waited for. Returns whether the server is up (and so needs stopping). */
  async stop(): Promise<boolean> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.attempt;
    return this.current.state === 'up';
  }

  private delayOf(attempt: number): number {
    return Math.min(this.policy.maxDelayMs, this.policy.firstDelayMs * 2 ** (attempt - 1));
  }

  private schedule(attempt: number, reason: string): void {
    const delay = this.delayOf(attempt);
    this.current = { state: 'restarting', reason, attempt, attempts: this.policy.attempts, nextAttemptAt: Date.now() + delay };
    this.timer = setTimeout(() => {
      this.attempt = this.restart(attempt, reason).finally(() => (this.attempt = undefined));
    }, delay);
  }

  private async restart(attempt: number, reason: string): Promise<void> {
    if (this.stopping) return;
    const started = Date.now();
    let child: ChildProcess;
    try {
      child = await this.launch();
    } catch (error) {
      const why = error instanceof Error ? error.message : 'it exited early';
      if (attempt >= this.policy.attempts) {
        this.current = {
          state: 'down',
          reason: `${reason}; ${this.policy.attempts} restarts failed (last: ${why.split('\n')[0]}); restart the service`,
        };
        this.log.error({ attempt, attempts: this.policy.attempts, error: why }, `${this.what} could not be restarted; it stays down`);
        return;
      }
      this.log.error({ attempt, attempts: this.policy.attempts, error: why }, `restart ${attempt} of ${this.what} failed; trying again`);
      if (!this.stopping) this.schedule(attempt + 1, reason);
      return;
    }
    this.current = { state: 'up' };
    this.log.info({ attempt, pid: child.pid, ms: Date.now() - started }, `${this.what} restarted`);
    this.watch(child);
  }
}
