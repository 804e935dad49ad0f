import path from 'node:path';
import {
  DataType,
  MessageSecurityMode,
  nodesets,
  OPCUACertificateManager,
  OPCUAServer,
  SecurityPolicy,
  StatusCodes,
  VariantArrayType,
  type UAVariable,
} from 'node-opcua';

/**
 * A node-opcua server as an OPC UA peer: a boiler with a temperature (Double), a pressure whose
 * sensor failed (Bad status), a writable setpoint and a counter (Int64). Endpoints: None
 * (anonymous allowed) and Sign/Basic256Sha256 (user `operator`). Its PKI lives in `dir`, so a
 * restart on the same port keeps its certificate (created once per test file: that is the slow part).
 */

export const USER = { name: 'operator', password: 'boiler room 7' };
/** The source time the boiler's values carry; a restarted server serves them with it again. */
export const SOURCE_TIME = new Date('2031-05-01T10:00:00.000Z');

export interface OpcuaPeer {
  port: number;
  url: string;
  variable(name: 'Temperature' | 'Pressure' | 'Setpoint' | 'Counter'): UAVariable;
  stop(): Promise<void>;
}

export async function startOpcuaServer(dir: string, port: number): Promise<OpcuaPeer> {
  const server = new OPCUAServer({
    port,
    resourcePath: '/plant',
    hostname: '127.0.0.1',
    alternateHostname: ['127.0.0.1'],
    nodeset_filename: [nodesets.standard],
    serverCertificateManager: new OPCUACertificateManager({
      rootFolder: path.join(dir, 'server-pki'),
      automaticallyAcceptUnknownCertificate: true,
      disableFileWatchers: true,
    }),
    userCertificateManager: new OPCUACertificateManager({
      rootFolder: path.join(dir, 'user-pki'),
      automaticallyAcceptUnknownCertificate: true,
      disableFileWatchers: true,
    }),
    securityModes: [MessageSecurityMode.None, MessageSecurityMode.Sign],
    securityPolicies: [SecurityPolicy.None, SecurityPolicy.Basic256Sha256],
    allowAnonymous: true,
    userManager: {
      isValidUser: (name: string, password: string) => name === USER.name && password === USER.password,
    },
  });
  await server.initialize();
  const addressSpace = server.engine.addressSpace!;
  const ns = addressSpace.getOwnNamespace();
  const boiler = ns.addObject({
    organizedBy: addressSpace.rootFolder.objects,
    browseName: 'Boiler',
    nodeId: 's=Boiler',
  });
  const variables = {
    Temperature: ns.addVariable({
      componentOf: boiler,
      browseName: 'Temperature',
      nodeId: 's=Boiler.Temperature',
      dataType: 'Double',
      accessLevel: 'CurrentRead',
      userAccessLevel: 'CurrentRead',
    }),
    Pressure: ns.addVariable({
      componentOf: boiler,
      browseName: 'Pressure',
      nodeId: 's=Boiler.Pressure',
      dataType: 'Double',
    }),
    Setpoint: ns.addVariable({
      componentOf: boiler,
      browseName: 'Setpoint',
      nodeId: 's=Boiler.Setpoint',
      dataType: 'Double',
      accessLevel: 'CurrentRead | CurrentWrite',
      userAccessLevel: 'CurrentRead | CurrentWrite',
    }),
    Counter: ns.addVariable({
      componentOf: boiler,
      browseName: 'Counter',
      nodeId: 's=Boiler.Counter',
      dataType: 'Int64',
    }),
  };
  variables.Temperature.setValueFromSource(
    { dataType: DataType.Double, value: 21.5 },
    StatusCodes.Good,
    SOURCE_TIME,
  );
  variables.Pressure.setValueFromSource(
    { dataType: DataType.Double, value: 0 },
    StatusCodes.BadSensorFailure,
    SOURCE_TIME,
  );
  variables.Setpoint.setValueFromSource(
    { dataType: DataType.Double, value: 60 },
    StatusCodes.Good,
    SOURCE_TIME,
  );
  variables.Counter.setValueFromSource(
    { dataType: DataType.Int64, arrayType: VariantArrayType.Scalar, value: [1, 5] },
    StatusCodes.Good,
    SOURCE_TIME,
  );
  await server.start();
  return {
    port,
    url: `opc.tcp://127.0.0.1:${port}/plant`,
    variable: (name) => variables[name],
    stop: () => server.shutdown(0),
  };
}
