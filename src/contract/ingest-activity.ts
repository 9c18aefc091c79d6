/**
 * How busy the service's external trace ingest is (the native, OTLP/HTTP and OTLP/gRPC
 * requests of clients, never the judges' own traces), without the evaluators feature importing
 * the traces feature: the traces' ingest notes each request it stores, the evaluators' worker
 * reads how many there are and yields the trace store to ingest while there are any (decision
 * 107). One per process, made by the app (src/app.ts).
 */
export interface IngestActivity {
  /** Notes an external ingest request that begins storing traces; call the answer once it is over. */
  begin(): () => void;
  /**
   * External ingest requests storing now, plus those that began in the last second: a client
   * sending one request after another counts while its requests take longer than a second.
   */
  recentRequests(): number;
}
