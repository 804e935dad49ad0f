import type { EntityManager } from '@mikro-orm/postgresql';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { AppError, errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { imageTypeOf } from './file-signatures.js';
import { SitePlan, SitePlanImage, type Corners } from './site-plan.entity.js';

export const SITE_PLAN_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface SitePlanInput {
  title?: string;
  corners?: Corners | null;
  opacity?: number;
  minZoom?: number;
}

/**
 * Site plans of an account. Callers have checked sitePlan.read / sitePlan.manage; here the plan's
 * account must be reachable (a plan of another tenant is NOT_FOUND). Every change is audited in the
 * same flush as the change itself.
 */
export class SitePlanService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
    private readonly maxImageBytes: number,
    private readonly clock: () => Date,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId: string | undefined,
  ): Promise<ListResult<SitePlan>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(SitePlan, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<SitePlan> {
    const plan = await this.em().findOne(SitePlan, { id }, { populate: ['account'] });
    if (!plan || !canReach(principal, plan.account)) throw errors.notFound('Site plan', id);
    return plan;
  }

  async create(principal: Principal, input: SitePlanInput & { accountId?: string }): Promise<SitePlan> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const plan = new SitePlan();
    plan.account = account;
    plan.createdAt = plan.updatedAt = this.clock();
    this.apply(plan, input);
    this.em().persist(plan);
    await this.record(principal, plan, 'sitePlan.create', { title: plan.title });
    return plan;
  }

  async update(principal: Principal, id: string, input: SitePlanInput): Promise<SitePlan> {
    const plan = await this.get(principal, id);
    this.apply(plan, input);
    plan.updatedAt = this.clock();
    await this.record(principal, plan, 'sitePlan.update', { fields: Object.keys(input) });
    return plan;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const plan = await this.get(principal, id);
    // The image row goes with the plan (foreign key on delete cascade).
    this.em().remove(plan);
    await this.record(principal, plan, 'sitePlan.delete', { title: plan.title });
  }

  /** Stores the image after checking its size and that it is PNG, JPEG or WebP by its bytes. */
  async putImage(principal: Principal, id: string, content: Buffer): Promise<SitePlan> {
    const plan = await this.get(principal, id);
    if (content.length > this.maxImageBytes) throw tooLarge(this.maxImageBytes);
    const type = imageTypeOf(content);
    if (!type) {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        415,
        'A site plan must be a PNG, JPEG or WebP image (SVG is not accepted)',
      );
    }
    const em = this.em();
    const image =
      (await em.findOne(SitePlanImage, { sitePlan: plan })) ??
      em.create(SitePlanImage, { sitePlan: plan, content });
    image.content = content;
    plan.imageType = type;
    plan.imageBytes = content.length;
    plan.imageUpdatedAt = plan.updatedAt = this.clock();
    em.persist(image);
    await this.record(principal, plan, 'sitePlan.image.upload', { type, bytes: content.length });
    return plan;
  }

  async image(principal: Principal, id: string): Promise<{ plan: SitePlan; content: Buffer }> {
    const plan = await this.get(principal, id);
    const image = plan.imageType ? await this.em().findOne(SitePlanImage, { sitePlan: plan }) : null;
    if (!image) throw errors.notFound('Image of site plan', id);
    return { plan, content: image.content };
  }

  private apply(plan: SitePlan, input: SitePlanInput): void {
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title)
        throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
      plan.title = title;
    }
    if (input.corners !== undefined) plan.corners = input.corners;
    if (input.opacity !== undefined) plan.opacity = input.opacity;
    if (input.minZoom !== undefined) plan.minZoom = input.minZoom;
  }

  private async record(
    principal: Principal,
    plan: SitePlan,
    action: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.audit.record(
      {
        accountId: plan.account.id,
        actor: actorOf(principal),
        action,
        target: { type: 'sitePlan', id: plan.id },
        details,
      },
      this.em(),
    );
  }
}

export const tooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', 413, `The file is larger than the limit (${limit} bytes)`, [{ limit }]);
