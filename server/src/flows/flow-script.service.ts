import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { fitsInputType } from './flow-execution.js';
import { FlowFilter, FlowTransformer, type FilterInputType } from './flow.entities.js';
import { flowsUsing } from './flows-using.js';
import { ScriptError, SCRIPT_TEMPLATES, type FlowScripts, type ScriptKind } from './flow-scripts.js';

export const FLOW_SCRIPT_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface FlowScriptInput {
  title?: string;
  description?: string;
  code?: string;
  inputType?: FilterInputType;
}

type ScriptEntity = FlowFilter | FlowTransformer;

const LABEL: Record<ScriptKind, string> = { filter: 'Filter', transformer: 'Transformer' };

/**
 * Filters and transformers of an account (one service, two kinds: they differ only in their
 * entry function and the filter's input type). Callers have checked filter.* / transformer.*;
 * here the account must be reachable. Code is compiled in the sandbox before it is saved.
 */
export class FlowScriptService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly scripts: FlowScripts,
    private readonly changed: (accountId: string) => void,
  ) {}

  private entity(kind: ScriptKind) {
    return kind === 'filter' ? FlowFilter : FlowTransformer;
  }

  async list(
    kind: ScriptKind,
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<ScriptEntity>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(this.entity(kind) as typeof FlowFilter, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(kind: ScriptKind, principal: Principal, id: string): Promise<ScriptEntity> {
    const row = await this.em().findOne(
      this.entity(kind) as typeof FlowFilter,
      { id },
      { populate: ['account'] },
    );
    if (!row || !canReach(principal, row.account)) throw errors.notFound(LABEL[kind], id);
    return row;
  }

  async create(
    kind: ScriptKind,
    principal: Principal,
    input: FlowScriptInput & { accountId?: string },
  ): Promise<ScriptEntity> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const row = kind === 'filter' ? new FlowFilter() : new FlowTransformer();
    row.account = account;
    row.code = SCRIPT_TEMPLATES[kind];
    await this.apply(kind, row, input);
    await this.em().persistAndFlush(row);
    this.changed(account.id);
    return row;
  }

  async update(
    kind: ScriptKind,
    principal: Principal,
    id: string,
    input: FlowScriptInput,
  ): Promise<ScriptEntity> {
    const row = await this.get(kind, principal, id);
    await this.apply(kind, row, input);
    await this.em().flush();
    this.changed(row.account.id);
    return row;
  }

  /** Refused (409 DELETE_BLOCKED) while a flow uses it; `details` names the flows. */
  async delete(kind: ScriptKind, principal: Principal, id: string): Promise<void> {
    const row = await this.get(kind, principal, id);
    const users = await flowsUsing(this.em(), { step: { type: kind, id } });
    if (users.length > 0) throw errors.deleteBlocked(`The ${kind} is used by integration flows`, users);
    await this.em().removeAndFlush(row);
    this.changed(row.account.id);
  }

  /** Runs the stored script on a sample input: `{ output }`, or 422 with the script's error. */
  async test(
    kind: ScriptKind,
    principal: Principal,
    id: string,
    input: unknown,
  ): Promise<{ output: unknown; durationMs: number }> {
    const row = await this.get(kind, principal, id);
    if (row instanceof FlowFilter && !fitsInputType(row.inputType, input)) {
      throw errors.unprocessable(
        'DS_FILTER_INVALID_INPUT',
        `The input is not of the filter's input type ${row.inputType}`,
        [{ path: '/input', inputType: row.inputType }],
      );
    }
    const began = performance.now();
    try {
      const output = await this.scripts.run(kind, row, input, { test: true, flowId: null });
      if (kind === 'filter' && typeof output !== 'boolean') {
        throw new ScriptError(
          'FILTER_RESULT_INVALID',
          `The filter returned ${JSON.stringify(output)?.slice(0, 100)}, not true or false`,
        );
      }
      return { output, durationMs: Math.round(performance.now() - began) };
    } catch (error) {
      if (error instanceof ScriptError) throw errors.unprocessable(error.code, error.message);
      throw error;
    }
  }

  private async apply(kind: ScriptKind, row: ScriptEntity, input: FlowScriptInput): Promise<void> {
    if (input.title !== undefined) row.title = input.title.trim();
    if (!row.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) row.description = input.description;
    if (input.inputType !== undefined && row instanceof FlowFilter) row.inputType = input.inputType;
    if (input.code !== undefined && input.code !== row.code) {
      await this.scripts.check(kind, input.code);
      row.code = input.code;
    }
  }
}
