import { raw, type EntityManager, type FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import {
  DeviceDriver,
  type HealthConfig,
  type ParserConfig,
  type TargetVariable,
} from './device-driver.entity.js';
import { MAX_SAMPLE_BYTES } from './device-driver.schemas.js';
import type { DriverParsing, ParseOutcome } from './driver-parsing.service.js';
import { assertValidHealthConfig } from './health-config.validator.js';
import { ParseError, type PacketMeta } from './parser.types.js';
import { PARSER_TYPES, parserFor } from './parsers/index.js';
import type { ErrorCode } from '../platform/error-codes.js';

export const DRIVER_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface DriverInput {
  title?: string;
  description?: string;
  shared?: boolean;
  parser?: ParserConfig;
  targetVariables?: TargetVariable[];
  healthConfig?: HealthConfig;
}

/** A sample packet as the parser test takes it. */
export type SamplePayload = { json: unknown } | { base64: string } | { hex: string };

/**
 * Device drivers: a parser, target variables and health rules. A driver belongs to an account;
 * `shared` drivers are offered read-only to the account's sub-accounts (like roles of parent
 * accounts). Callers have checked the route permission; tenancy is checked here.
 */
export class DeviceDriverService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly parsing: DriverParsing,
  ) {}

  /** Drivers usable in the acting account: its own and the shared ones of its ancestors. */
  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<DeviceDriver>> {
    const acting = await this.accounts.actingAccount(principal, accountId);
    const ancestors = acting.path.filter((id) => id !== acting.id);
    const where: FilterQuery<DeviceDriver> = {
      $and: [{ $or: [{ account: acting.id }, { account: { $in: ancestors }, shared: true }] }],
    };
    if (params.search) where.$and!.push({ title: { $ilike: likePattern(params.search) } });
    const [rows, total] = await this.em().findAndCount(DeviceDriver, where, {
      // Titles sort as people read them: "alpha" before "Beta".
      orderBy: [
        ...params.orderBy.map((o) => ({
          [o.field === 'title' ? raw((alias) => `lower(${alias}.title)`) : o.field]: o.direction,
        })),
        { id: 'asc' },
      ],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  /** A driver of a reachable account, or a shared driver of an ancestor of the principal's home. */
  async get(principal: Principal, id: string): Promise<DeviceDriver> {
    const driver = await this.em().findOne(DeviceDriver, { id }, { populate: ['account'] });
    if (!driver || !(await this.visible(principal, driver))) throw errors.notFound('Device driver', id);
    return driver;
  }

  async create(principal: Principal, input: DriverInput & { accountId?: string }): Promise<DeviceDriver> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const driver = new DeviceDriver();
    driver.account = account;
    await this.apply(driver, input);
    await this.em().persistAndFlush(driver);
    return driver;
  }

  async update(principal: Principal, id: string, input: DriverInput): Promise<DeviceDriver> {
    const driver = await this.changeable(principal, id);
    if (input.shared === false && driver.shared) {
      const usedBelow = (await this.usage(driver)).filter((u) => u.accountId !== driver.account.id);
      if (usedBelow.length > 0) {
        throw errors.conflict(
          'DRIVER_IN_USE',
          'Sub-accounts use this shared driver; it cannot be unshared',
          usedBelow,
        );
      }
    }
    await this.apply(driver, input);
    await this.em().flush();
    return driver;
  }

  /** Refused while templates or devices use the driver: they would lose their parser silently. */
  async delete(principal: Principal, id: string): Promise<void> {
    const driver = await this.changeable(principal, id);
    const users = await this.usage(driver);
    if (users.length > 0) throw errors.deleteBlocked('Templates or devices use this driver', users);
    await this.em().removeAndFlush(driver);
    this.parsing.forget(driver.id);
  }

  /** Parses a sample with a stored driver (as the ingest path would). */
  async test(
    principal: Principal,
    id: string,
    sample: SamplePayload,
    meta?: PacketMeta,
  ): Promise<ParseOutcome> {
    const driver = await this.get(principal, id);
    return asUnprocessable(() => this.parsing.parse(driver, sampleBytes(sample), meta));
  }

  /**
   * Encodes downlink `data` with a stored driver's codec: its bytes (also as hex) and fPort; the
   * codec's errors are a 422 DOWNLINK_ENCODE_FAILED with its messages.
   */
  async encodeDownlink(principal: Principal, id: string, data: unknown, meta?: PacketMeta) {
    const driver = await this.get(principal, id);
    const encoded = await asUnprocessable(() => this.parsing.encodeDownlink(driver, data, meta));
    if (encoded.errors.length > 0) {
      throw errors.unprocessable(
        'DOWNLINK_ENCODE_FAILED',
        `The codec refused the downlink: ${encoded.errors.join('; ')}`,
        encoded.errors.map((message) => ({ message })),
      );
    }
    const { bytes, fPort, warnings, logs } = encoded;
    return { bytes, hex: Buffer.from(bytes).toString('hex'), fPort, warnings, logs };
  }

  /** Parses a sample with a parser configuration that is not stored; nothing of an account is read. */
  async testConfig(input: {
    parser: ParserConfig;
    targetVariables?: TargetVariable[];
    payload: SamplePayload;
    meta?: PacketMeta;
  }): Promise<ParseOutcome> {
    checkParserSettings(input.parser);
    const bytes = sampleBytes(input.payload);
    return asUnprocessable(() =>
      this.parsing.parseOnce(input.parser, input.targetVariables ?? [], bytes, input.meta),
    );
  }

  private async visible(principal: Principal, driver: DeviceDriver): Promise<boolean> {
    if (canReach(principal, driver.account)) return true;
    if (!driver.shared) return false;
    const home = await this.em().findOne(Account, { id: principal.accountId });
    return !!home?.path.includes(driver.account.id);
  }

  /** Shared drivers of a parent account are read here and changed there. */
  private async changeable(principal: Principal, id: string): Promise<DeviceDriver> {
    const driver = await this.get(principal, id);
    if (!canReach(principal, driver.account)) {
      throw errors.forbidden(
        'INHERITED_DEVICE_DRIVER',
        `Device driver ${driver.title} belongs to a parent account and is changed there`,
        [{ id: driver.id }],
      );
    }
    return driver;
  }

  /** Templates and devices referring to the driver (at most 20 of each), for 409 details. */
  private async usage(driver: DeviceDriver): Promise<Array<{ type: string; id: string; accountId: string }>> {
    const rows = await this.em()
      .getConnection()
      .execute<Array<{ type: string; id: string; account_id: string }>>(
        `(SELECT 'deviceTemplate' AS type, id, account_id FROM device_templates WHERE driver_id = ? LIMIT 20)
         UNION ALL
         (SELECT 'virtualDevice' AS type, id, account_id FROM virtual_devices WHERE driver_id = ? LIMIT 20)`,
        [driver.id, driver.id],
      );
    return rows.map((r) => ({ type: r.type, id: r.id, accountId: r.account_id }));
  }

  private async apply(driver: DeviceDriver, input: DriverInput): Promise<void> {
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title)
        throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
      driver.title = title;
    }
    if (!driver.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) driver.description = input.description;
    if (input.shared !== undefined) driver.shared = input.shared;
    if (input.targetVariables !== undefined)
      driver.targetVariables = normaliseVariables(input.targetVariables);
    if (input.healthConfig !== undefined) driver.healthConfig = input.healthConfig;
    if (input.parser !== undefined) {
      checkParserSettings(input.parser);
      await checkParserCompiles(input.parser);
      driver.parser = input.parser;
    }
    // Checked on the final state: removing a variable a rule uses is refused as well.
    assertValidHealthConfig(driver.healthConfig, driver.targetVariables);
  }
}

function normaliseVariables(variables: TargetVariable[]): TargetVariable[] {
  const seen = new Set<string>();
  return variables.map((variable, index) => {
    const key = variable.key.trim();
    const path = `/targetVariables/${index}/key`;
    if (!key || key.startsWith('_')) {
      throw errors.validation('A target variable key must not be empty or start with _', [
        key ? problem(path, 'pattern', { pattern: '^[^_]' }) : problem(path, 'minLength', { limit: 1 }),
      ]);
    }
    if (seen.has(key)) {
      throw errors.validation(`Duplicate target variable key "${key}"`, [
        problem(path, 'unique', { value: key }),
      ]);
    }
    seen.add(key);
    return { ...variable, key };
  });
}

/** 422 INVALID_PARSER_CONFIG naming every problem of a parser configuration. */
function checkParserSettings(parser: ParserConfig): void {
  const plugin = parserFor(parser.type);
  const problems = plugin
    ? plugin.validate(parser).map((p) => ({ ...p, path: `/parser${p.path}` }))
    : [
        problem(
          '/parser/type',
          'enum',
          { allowedValues: PARSER_TYPES },
          `unknown parser type; known: ${PARSER_TYPES.join(', ')}`,
        ),
      ];
  if (problems.length > 0) {
    throw errors.unprocessable(
      'INVALID_PARSER_CONFIG',
      `Invalid parser configuration: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      problems,
    );
  }
}

/** Scripts are compiled on save, so a syntax error shows up here and not on the first packet. */
async function checkParserCompiles(parser: ParserConfig): Promise<void> {
  const plugin = parserFor(parser.type);
  if (!plugin?.compile) return;
  const compiled = await asUnprocessable(() => plugin.compile!(parser), 'INVALID_PARSER_CONFIG');
  compiled.dispose?.();
}

/** ParseError → 422 with its code (or `code`), the message being what the user acts on. */
async function asUnprocessable<T>(work: () => Promise<T>, code?: ErrorCode): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ParseError) {
      // The script's console lines help most when it failed.
      const logs = error.logs.length > 0 ? { logs: error.logs } : {};
      throw errors.unprocessable(code ?? error.code, error.message, [{ parseError: error.code, ...logs }]);
    }
    throw error;
  }
}

export function sampleBytes(sample: SamplePayload): Buffer {
  let bytes: Buffer;
  if ('json' in sample) bytes = Buffer.from(JSON.stringify(sample.json) ?? 'null');
  else if ('base64' in sample) bytes = Buffer.from(sample.base64, 'base64');
  else {
    const hex = sample.hex.replace(/\s+/g, '');
    if (hex.length % 2 !== 0) {
      throw errors.validation('hex must have two digits per byte', [{ path: '/payload/hex' }]);
    }
    bytes = Buffer.from(hex, 'hex');
  }
  if (bytes.length > MAX_SAMPLE_BYTES) {
    throw errors.validation(`The sample is larger than ${MAX_SAMPLE_BYTES} bytes`, [{ path: '/payload' }]);
  }
  return bytes;
}
