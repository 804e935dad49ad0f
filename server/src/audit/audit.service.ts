import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { currentClientAddress } from '../platform/http/transport.js';
import { AuditEvent, type AuditActorKind } from './audit-event.entity.js';

export const AUDIT_EVENT_SORTABLE = ['occurredAt', 'action'] as const;

export interface AuditActor {
  kind: AuditActorKind;
  id: string | null;
  /** Home account of the user or key. */
  accountId: string | null;
}

export interface AuditRecord {
  accountId: string;
  actor: AuditActor;
  action: string;
  target?: { type: string; id: string } | null;
  details?: Record<string, unknown>;
}

export const actorOf = (principal: Principal): AuditActor => ({
  kind: principal.kind,
  id: principal.id,
  accountId: principal.accountId,
});

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, accountId: null };

const SECRET_KEY = /secret|password|token|otp|recovery|sealed|private/i;
const REDACTED = '********';

/** Details as stored: values under secret-sounding keys are replaced, at any depth. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? REDACTED : withoutSecrets(v)]),
  );
}

/**
 * Whether a reader may see who acted. Actors act in their home account and below, so the actor's
 * account lies on the event account's path; it is shown when it is the reader's account or below.
 */
export function actorVisible(event: AuditEvent, principal: Principal): boolean {
  if (!event.actorAccountId) return false;
  const path = event.account.path;
  const actorDepth = path.indexOf(event.actorAccountId);
  const readerDepth = path.indexOf(principal.accountId);
  return readerDepth >= 0 && actorDepth >= readerDepth;
}

/**
 * The audit log, written by any domain (and later by CLI commands) through `record`. Writes join
 * the caller's unit of work, so an event commits together with the change it describes; each
 * event is also one log line. Reads: callers have checked auditEvent.read; only events of the
 * principal's account and below are returned.
 */
export class AuditService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly clock: () => Date,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Persists the event and flushes `em` (with whatever else is pending there), then logs it. */
  async record(input: AuditRecord, em: EntityManager = this.em()): Promise<AuditEvent> {
    const [event] = await this.recordAll([input], em);
    return event!;
  }

  /** Several events in one flush, together with whatever else is pending on `em`. */
  async recordAll(inputs: readonly AuditRecord[], em: EntityManager = this.em()): Promise<AuditEvent[]> {
    const events = inputs.map((input) => this.build(input, em));
    for (const event of events) em.persist(event);
    await em.flush();
    events.forEach((event, i) => this.logLine(event, inputs[i]!));
    return events;
  }

  private build(input: AuditRecord, em: EntityManager): AuditEvent {
    const event = new AuditEvent();
    event.occurredAt = this.clock();
    event.account = em.getReference(Account, input.accountId);
    event.actorKind = input.actor.kind;
    event.actorId = input.actor.id;
    event.actorAccountId = input.actor.accountId;
    event.action = input.action.slice(0, 100);
    event.targetType = input.target?.type.slice(0, 40) ?? null;
    event.targetId = input.target?.id.slice(0, 100) ?? null;
    event.details = withoutSecrets(input.details ?? {}) as Record<string, unknown>;
    return event;
  }

  private logLine(event: AuditEvent, input: AuditRecord): void {
    // The request's client (behind a trusted proxy: the forwarded one); absent for CLI and jobs.
    const clientAddress = currentClientAddress();
    this.log.info(
      {
        audit: {
          id: event.id,
          accountId: input.accountId,
          actor: { kind: event.actorKind, id: event.actorId },
          ...(clientAddress ? { clientAddress } : {}),
          action: event.action,
          target: input.target ?? null,
          details: event.details,
        },
      },
      `audit: ${event.action}`,
    );
  }

  /** Events of `account` (reachable, checked by the caller) or else of the principal's whole tree. */
  async list(
    principal: Principal,
    params: ListParams,
    filter: { account?: Account; action?: string },
  ): Promise<ListResult<AuditEvent>> {
    const where: FilterQuery<AuditEvent> = filter.account
      ? { account: filter.account.id }
      : { account: { path: { $contains: [principal.accountId] } } };
    if (filter.action) where.action = filter.action;
    if (params.search) where.action = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(AuditEvent, where, {
      populate: ['account'],
      // Ids are time-ordered: events of one instant keep the order they were recorded in.
      orderBy: [
        ...params.orderBy.map((o) => ({ [o.field]: o.direction })),
        { id: params.orderBy[0]?.direction ?? 'desc' },
      ],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }
}
