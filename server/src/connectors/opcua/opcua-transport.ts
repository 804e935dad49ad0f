import { ClientTransportBase, parseEndpointUrl, type IClientTransportFactory } from 'node-opcua';
import { refusalOf } from '../../outgoing/dial/connect-failure.js';
import type { DialOut } from '../../outgoing/dial/dial-out.js';
import type { TargetRefusedError } from '../../outgoing/target-guard.js';

/**
 * The guard's refusal of the last connection attempt, kept for the caller: node-opcua reports a
 * failed connect with its own error, without the cause, and the tenant must read why.
 */
export interface RefusalHolder {
  refused?: TargetRefusedError;
}

/**
 * node-opcua's own TCP transport opens its socket with `net.createConnection`, past the
 * outgoing-target guard. This one is the same transport (the HEL/ACK handshake and everything
 * after it are node-opcua's, inherited) with the socket taken from `DialOut.socket`: the endpoint
 * host is resolved and judged by the guard and the socket connects to exactly the judged address.
 * Every client of the kind, the endpoint discovery one included, is built with this factory.
 */
class GuardedTcpTransport extends ClientTransportBase {
  constructor(
    private readonly dial: DialOut,
    private readonly refusals: RefusalHolder,
    settings: ConstructorParameters<typeof ClientTransportBase>[0],
  ) {
    super(settings);
  }

  override connect(endpointUrl: string, callback: (err?: Error) => void): void {
    this.endpointUrl = endpointUrl;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      callback(err);
    };
    let host: string;
    let port: number;
    try {
      const url = parseEndpointUrl(endpointUrl);
      if (url.protocol !== 'opc.tcp:') throw new Error(`Not an opc.tcp:// endpoint: ${endpointUrl}`);
      host = url.hostname ?? '';
      port = Number.parseInt(url.port || '4840', 10);
    } catch (error) {
      return finish(error as Error);
    }
    const socket = this.dial.socket({ host, port }, () => {
      socket.removeListener('error', onConnectError);
      this._perform_HEL_ACK_transaction((err) => {
        if (!err) {
          this._install_post_connect_error_handler(endpointUrl);
          this.emit('connect');
        }
        finish(err ?? undefined);
      });
    });
    const onConnectError = (err: Error) => {
      const refused = refusalOf(err);
      if (refused) this.refusals.refused = refused;
      finish(err);
    };
    socket.once('error', onConnectError);
    socket.setNoDelay(false);
    socket.setKeepAlive(true, this.timeout >> 1);
    socket.setTimeout(this.timeout >> 1, () => this.forceConnectionBreak());
    this._install_socket(socket);
  }
}

/** The transport factory a client of the kind is created with (`OPCUAClientOptions.transportFactory`). */
export function guardedTransportFactory(
  dial: DialOut,
  refusals: RefusalHolder = {},
): IClientTransportFactory {
  return { create: (settings) => new GuardedTcpTransport(dial, refusals, settings) };
}
