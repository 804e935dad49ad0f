import { Type } from 'typebox';
import type { Principal } from '../../auth/principal.js';
import type { App, AppContext } from '../../context.js';
import { resolveNodeId } from 'node-opcua';
import { errors } from '../../platform/errors.js';
import { errorResponses, IdParams } from '../../platform/http/schemas.js';
import type { Services } from '../../services.js';
import { OpcuaSession } from './opcua-session.js';

const BrowseQuery = Type.Object({
  nodeId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'The node whose children are listed (default: the Objects folder, i=85)',
    }),
  ),
});

const BrowsedNodeReply = Type.Object({
  nodeId: Type.String(),
  browseName: Type.String(),
  displayName: Type.String(),
  nodeClass: Type.String({ description: 'Object, Variable, Method, ObjectType, …' }),
  dataType: Type.Union([Type.String(), Type.Null()], {
    description: 'Variables: the built-in type (Double) or the data type node id',
  }),
});

/** The console's OPC UA node picker: browses the server through the connector's open session. */
export async function opcuaRoutes(
  app: App,
  _ctx: AppContext,
  { connectors, links }: Services,
): Promise<void> {
  app.get(
    '/xapi/v1/connectors/:id/opcua/browse',
    {
      config: { auth: 'principal', permission: 'connector.read', resource: 'connector' },
      schema: {
        tags: ['connectors'],
        summary: 'Children of a node on the OPC UA server of an opcua connector (at most 1000)',
        params: IdParams,
        querystring: BrowseQuery,
        response: {
          200: Type.Object({
            connected: Type.Boolean({
              description: 'false: the connector has no open OPC UA session (data is empty)',
            }),
            data: Type.Array(BrowsedNodeReply),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const connector = await connectors.get(request.principal as Principal, request.params.id);
      const session = links.session(connector.id);
      // Not connected (or not an OPC UA client): nothing to browse, said so; the picker shows it.
      if (connector.type !== 'opcua' || !(session instanceof OpcuaSession))
        return { connected: false, data: [] };
      const nodeId = request.query.nodeId ?? 'i=85';
      try {
        resolveNodeId(nodeId);
      } catch {
        throw errors.validation('nodeId is not an OPC UA node id (e.g. ns=2;s=Boiler or i=85)');
      }
      try {
        return { connected: true, data: await session.browse(nodeId) };
      } catch (error) {
        const message = (error as Error).message.split('\n')[0]!.slice(0, 300);
        throw errors.unprocessable('OPCUA_BROWSE_FAILED', message);
      }
    },
  );
}
