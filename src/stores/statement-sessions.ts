import type { createClient } from '@clickhouse/client';

/**
 * Sessions of the embedded engine, each given to one statement at a time.
 *
 * The embedded engine (chdb 3.4, ClickHouse 26.7 in-process) keeps the output a statement had
 * already formatted when it failed (a result or memory limit, a `throwIf` part-way through) and
 * puts it in front of the answer of the next statement on the same session: one caller's rows
 * at the head of another's (docs/engine/leftover-output.md). So:
 * - a session runs one statement at a time, leased here and handed back when its answer is
 *   whole (the engine's answer is materialized before the call returns, nothing streams later);
 * - a session whose statement failed is closed, never handed out again: its leftover dies with
 *   it, and the next statement gets a fresh session, set up by the same `open`.
 *
 * At most `size` sessions exist; more statements wait in the order they came (with `size` 1
 * the statements run one after another in that order, as on one session).
 */

/** The connection contract of the client (`createClient({ connection })`). */
export type EngineConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
type Params<Method extends 'query' | 'exec' | 'command' | 'insert'> = Parameters<EngineConnection[Method]>[0];
type PingResult = Awaited<ReturnType<EngineConnection['ping']>>;

/** What a session must offer: the connection contract and the engine's raw insert. */
export interface EngineSession extends EngineConnection {
  readonly chdb: { rawInsert(params: RawInsertParams): Promise<unknown> };
}

export interface RawInsertParams {
  table: string;
  values: Buffer;
  /** JSONEachRow (objects), or JSONCompactEachRow (arrays of the `columns`, in their order). */
  format: 'JSONEachRow' | 'JSONCompactEachRow';
  columns?: readonly string[];
}

export class StatementSessions implements EngineConnection {
  readonly #idle: EngineSession[] = [];
  readonly #waiting: Array<{ resolve: (session: EngineSession) => void; reject: (error: Error) => void }> = [];
  #open = 0;
  #closed = false;

  /** Sessions closed after a failed statement, for tests and diagnostics. */
  discarded = 0;

  constructor(
    /** Opens and sets up a new session (its USE and SETs). */
    private readonly openSession: () => Promise<EngineSession>,
    private readonly size: number,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`A session pool needs at least one session (got ${size})`);
  }

  /** The engine's raw insert, through a leased session like every other statement. */
  readonly chdb = {
    rawInsert: (params: RawInsertParams): Promise<unknown> => this.#run((session) => session.chdb.rawInsert(params)),
  };

  query(params: Params<'query'>) {
    return this.#run((session) => session.query(params));
  }

  exec(params: Params<'exec'>) {
    return this.#run((session) => session.exec(params));
  }

  command(params: Params<'command'>) {
    return this.#run((session) => session.command(params));
  }

  insert(params: Params<'insert'>) {
    return this.#run((session) => session.insert(params));
  }

  async ping(): Promise<PingResult> {
    try {
      await this.#run((session) => session.command({ query: 'SELECT 1' }));
      return { success: true };
    } catch (error) {
      return { success: false, error: error instanceof Error ? error : new Error(String(error)) };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(new Error('The engine sessions are closed'));
    const idle = this.#idle.splice(0);
    this.#open -= idle.length;
    await Promise.all(idle.map((session) => session.close()));
  }

  async #run<T>(statement: (session: EngineSession) => Promise<T>): Promise<T> {
    const session = await this.#lease();
    let answer: T;
    try {
      answer = await statement(session);
    } catch (error) {
      this.#discard(session);
      throw error;
    }
    this.#handBack(session);
    return answer;
  }

  async #lease(): Promise<EngineSession> {
    if (this.#closed) throw new Error('The engine sessions are closed');
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#open < this.size) {
      this.#open += 1;
      try {
        return await this.openSession();
      } catch (error) {
        this.#open -= 1;
        this.#wakeOne();
        throw error;
      }
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #handBack(session: EngineSession) {
    if (this.#closed) {
      this.#open -= 1;
      void session.close();
      return;
    }
    const waiter = this.#waiting.shift();
    if (waiter) waiter.resolve(session);
    else this.#idle.push(session);
  }

  /** Closes a session whose statement failed; the next waiter gets a fresh one. */
  #discard(session: EngineSession) {
    this.discarded += 1;
    this.#open -= 1;
    void session.close().catch(() => undefined);
    this.#wakeOne();
  }

  /** A place freed without a session to hand over: the first waiter opens its own. */
  #wakeOne() {
    const waiter = this.#waiting.shift();
    if (!waiter) return;
    this.#lease().then(waiter.resolve, waiter.reject);
  }
}
