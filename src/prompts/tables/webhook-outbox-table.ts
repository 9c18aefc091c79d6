import type postgres from 'postgres';
import type { WebhookEventType } from '../model/webhook-schemas.js';

/**
 * Writes an event and one pending delivery per endpoint of the workspace subscribed to its
 * type. It must run inside the transaction of the change it announces: both commit or neither
 * does, so no committed change ever lacks its deliveries (the outbox). Nothing is written
 * when no endpoint listens.
 */
export async function enqueueEvent(
  tx: postgres.TransactionSql,
  workspaceId: string,
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<void> {
  await tx`
    with event as (
      insert into webhook_events (workspace_id, type, data)
      select ${workspaceId}, ${type}, ${tx.json(data as postgres.JSONValue)}
      where exists (select 1 from webhooks where workspace_id = ${workspaceId} and ${type} = any (events))
      returning id)
    insert into webhook_deliveries (event_id, webhook_id)
    select event.id, w.id from event join webhooks w on w.workspace_id = ${workspaceId} and ${type} = any (w.events)`;
}
