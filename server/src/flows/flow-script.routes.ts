import { Type, type TSchema } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { FlowFilter, type FlowTransformer } from './flow.entities.js';
import {
  AccountListQuery,
  FilterCreate,
  FilterReply,
  FilterUpdate,
  ScriptTestBody,
  ScriptTestReply,
  TransformerCreate,
  TransformerReply,
  TransformerUpdate,
} from './flow.schemas.js';
import { FLOW_SCRIPT_SORTABLE, type FlowScriptInput } from './flow-script.service.js';
import type { ScriptKind } from './flow-scripts.js';

const scriptDto = (s: FlowFilter | FlowTransformer) => ({
  id: s.id,
  accountId: s.account.id,
  title: s.title,
  description: s.description,
  code: s.code,
  ...(s instanceof FlowFilter ? { inputType: s.inputType } : {}),
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

interface KindRoutes {
  kind: ScriptKind;
  path: string;
  label: string;
  create: TSchema;
  update: TSchema;
  reply: TSchema;
}

const KINDS: KindRoutes[] = [
  {
    kind: 'filter',
    path: '/xapi/v1/filters',
    label: 'filter',
    create: FilterCreate,
    update: FilterUpdate,
    reply: FilterReply,
  },
  {
    kind: 'transformer',
    path: '/xapi/v1/transformers',
    label: 'transformer',
    create: TransformerCreate,
    update: TransformerUpdate,
    reply: TransformerReply,
  },
];

/** Filters and transformers: the same routes under /filters and /transformers. */
export async function flowScriptRoutes(app: App, _ctx: AppContext, { flowScripts }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  for (const { kind, path, label, create, update, reply } of KINDS) {
    const tags = [`${kind}s`];
    const READ = `${kind}.read`;
    const MANAGE = `${kind}.manage`;

    app.get(
      path,
      {
        config: { auth: 'principal', permission: READ },
        schema: {
          tags,
          summary: `${label[0]!.toUpperCase()}${label.slice(1)}s of an account: search in the title, sort (title, createdAt, updatedAt), paging`,
          querystring: AccountListQuery,
          response: { 200: listReply(reply), ...errorResponses },
        },
      },
      async (request) => {
        const query = request.query as { accountId?: string };
        const params = parseListQuery(request.query, FLOW_SCRIPT_SORTABLE, 'title');
        const result = await flowScripts.list(kind, principal(request), params, query.accountId);
        return { data: result.data.map(scriptDto), meta: result.meta };
      },
    );

    app.get(
      `${path}/:id`,
      {
        config: { auth: 'principal', permission: READ, resource: kind },
        schema: {
          tags,
          summary: `One ${label}`,
          params: IdParams,
          response: { 200: reply, ...errorResponses },
        },
      },
      async (request) => scriptDto(await flowScripts.get(kind, principal(request), request.params.id)),
    );

    app.post(
      path,
      {
        config: { auth: 'principal', permission: MANAGE },
        schema: {
          tags,
          summary: `Create a ${label}; the code is loaded in the sandbox first (400 when it does not load)`,
          body: create,
          response: { 201: reply, ...errorResponses },
        },
      },
      async (request, res) =>
        res
          .status(201)
          .send(
            scriptDto(
              await flowScripts.create(
                kind,
                principal(request),
                request.body as FlowScriptInput & { accountId?: string },
              ),
            ),
          ),
    );

    app.put(
      `${path}/:id`,
      {
        config: { auth: 'principal', permission: MANAGE, resource: kind },
        schema: {
          tags,
          summary: `Change a ${label}`,
          params: IdParams,
          body: update,
          response: { 200: reply, ...errorResponses },
        },
      },
      async (request) =>
        scriptDto(
          await flowScripts.update(
            kind,
            principal(request),
            request.params.id,
            request.body as FlowScriptInput,
          ),
        ),
    );

    app.delete(
      `${path}/:id`,
      {
        config: { auth: 'principal', permission: MANAGE, resource: kind },
        schema: {
          tags,
          summary: `Delete a ${label} (409 DELETE_BLOCKED while an integration flow uses it)`,
          params: IdParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, res) => {
        await flowScripts.delete(kind, principal(request), request.params.id);
        return res.status(204).send(null);
      },
    );

    app.post(
      `${path}/:id/test`,
      {
        config: { auth: 'principal', permission: MANAGE, resource: kind },
        schema: {
          tags,
          summary: `Run the ${label} on a sample input: 200 with the output, or 422 with the script's error`,
          params: IdParams,
          body: ScriptTestBody,
          response: { 200: ScriptTestReply, ...errorResponses },
        },
      },
      async (request) => flowScripts.test(kind, principal(request), request.params.id, request.body.input),
    );
  }
}
