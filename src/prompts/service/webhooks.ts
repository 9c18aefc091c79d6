import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import type { CreateWebhook, DeliveriesQuery, Delivery, Webhook } from '../model/webhook-schemas.js';
import { generateSecret } from '../model/webhook-signature.js';
import type { TargetGuard } from '../../egress/target-guard.js';

type WebhookRow = Omit<Webhook, 'createdAt'> & { createdAt: Date };
const toWebhook = (row: WebhookRow): Webhook => ({ ...row, createdAt: row.createdAt.toISOString() });

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export async function createWebhook(sql: Sql, workspaceId: string, body: CreateWebhook, guard: TargetGuard) {
  const problem = guard.problemWith(body.url);
  if (problem) throw new AppError('VALIDATION_ERROR', `url ${problem}`, { issues: [{ path: 'body.url', message: problem }] });
  const secret = body.secret ?? generateSecret();
  const [row] = await sql<WebhookRow[]>`
    insert into webhooks (workspace_id, url, events, secret) values (${workspaceId}, ${body.url}, ${body.events}, ${secret})
    returning id, url, events, status, consecutive_failures as "consecutiveFailures", workspace_id as "workspaceId", created_at as "createdAt"`;
  return { ...toWebhook(row!), secret };
}

export async function listWebhooks(sql: Sql, workspaceId: string): Promise<Webhook[]> {
  const rows = await sql<WebhookRow[]>`
    select id, url, events, status, consecutive_failures as "consecutiveFailures", workspace_id as "workspaceId", created_at as "createdAt"
    from webhooks where workspace_id = ${workspaceId} order by created_at, id`;
  return rows.map(toWebhook);
}

export async function getWebhook(sql: Sql, workspaceId: string, id: string): Promise<Webhook> {
  const [row] = await sql<WebhookRow[]>`
    select id, url, events, status, consecutive_failures as "consecutiveFailures", workspace_id as "workspaceId", created_at as "createdAt"
    from webhooks where id = ${id} and workspace_id = ${workspaceId}`;
  if (!row) throw notFound('Webhook', { id });
  return toWebhook(row);
}

/** Removes the endpoint and, by cascade, its deliveries (pending ones are never sent). */
export async function deleteWebhook(sql: Sql, workspaceId: string, id: string): Promise<{ id: string }> {
  const rows = await sql`delete from webhooks where id = ${id} and workspace_id = ${workspaceId} returning id`;
  if (rows.length === 0) throw notFound('Webhook', { id });
  return { id };
}

type DeliveryRow = Omit<Delivery, 'lastAttemptAt' | 'nextAttemptAt' | 'deliveredAt' | 'createdAt'> & {
  lastAttemptAt: Date | null;
  nextAttemptAt: Date;
  deliveredAt: Date | null;
  createdAt: Date;
};

export async function listDeliveries(sql: Sql, workspaceId: string, id: string, query: DeliveriesQuery) {
  await getWebhook(sql, workspaceId, id);
  const rows = await sql<(DeliveryRow & { total: string })[]>`
    select d.id, d.event_id as "eventId", e.type as "eventType", d.status, d.attempts, d.last_status_code as "lastStatusCode",
      d.last_error as "lastError", d.last_response_excerpt as "lastResponseExcerpt", d.last_attempt_at as "lastAttemptAt",
      d.next_attempt_at as "nextAttemptAt", d.delivered_at as "deliveredAt", d.created_at as "createdAt", count(*) over () as total
    from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where d.webhook_id = ${id} ${query.status === undefined ? sql`` : sql`and d.status = ${query.status}`}
    order by d.created_at desc, d.id
    limit ${query.limit} offset ${query.offset}`;
  const deliveries: Delivery[] = rows.map(({ total: _total, ...r }) => ({
    ...r,
    lastAttemptAt: iso(r.lastAttemptAt),
    nextAttemptAt: r.status === 'pending' ? r.nextAttemptAt.toISOString() : null,
    deliveredAt: iso(r.deliveredAt),
    createdAt: r.createdAt.toISOString(),
  }));
  return { deliveries, total: rows[0] ? Number(rows[0].total) : 0 };
}
