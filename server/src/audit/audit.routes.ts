import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, listReply } from '../platform/http/schemas.js';
import type { AuditEvent } from './audit-event.entity.js';
import { AuditEventListQuery, AuditEventReply } from './audit.schemas.js';
import { actorVisible, AUDIT_EVENT_SORTABLE } from './audit.service.js';

const tags = ['audit'];

export const auditEventDto = (event: AuditEvent, principal: Principal) => ({
  id: event.id,
  accountId: event.account.id,
  occurredAt: event.occurredAt.toISOString(),
  actor: { kind: event.actorKind, id: actorVisible(event, principal) ? event.actorId : null },
  action: event.action,
  target: event.targetType && event.targetId ? { type: event.targetType, id: event.targetId } : null,
  details: event.details,
});

export async function auditRoutes(app: App, _ctx: AppContext, { audit, accounts }: Services): Promise<void> {
  app.get(
    '/xapi/v1/audit-events',
    {
      config: { auth: 'principal', permission: 'auditEvent.read' },
      schema: {
        tags,
        summary:
          'Security-relevant changes (identity configuration, …) of an account, or of the caller’s account and all below; newest first',
        querystring: AuditEventListQuery,
        response: { 200: listReply(AuditEventReply), ...errorResponses },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const q = request.query;
      const params = parseListQuery(q, AUDIT_EVENT_SORTABLE, '-occurredAt');
      const account = q.accountId ? await accounts.reachable(principal, q.accountId) : undefined;
      const result = await audit.list(principal, params, {
        ...(account ? { account } : {}),
        ...(q.action ? { action: q.action } : {}),
      });
      return { data: result.data.map((e) => auditEventDto(e, principal)), meta: result.meta };
    },
  );
}
