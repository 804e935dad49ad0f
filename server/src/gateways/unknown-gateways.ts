/** A gateway that heard uplinks of an account's devices but is not registered there. */
export interface UnknownGateway {
  eui: string | null;
  networkId: string | null;
  lastHeardAt: Date;
  uplinks: number;
}

/** At most this many per account; the one heard longest ago makes room. */
const PER_ACCOUNT = 200;

/**
 * Gateways heard but not registered, per account, in memory on this node since it started.
 * Receptions never create gateways by themselves: a gateway is infrastructure an operator names,
 * places and assigns to a scope, and a neighbour's gateway that happens to hear a device must not
 * appear in the account. This list lets the console offer "add" for the ones that matter.
 */
export class UnknownGateways {
  private readonly byAccount = new Map<string, Map<string, UnknownGateway>>();

  heard(accountId: string, eui: string | null, networkId: string | null, at: number, uplinks: number): void {
    let known = this.byAccount.get(accountId);
    if (!known) {
      known = new Map<string, UnknownGateway>();
      this.byAccount.set(accountId, known);
    }
    const key = `${eui ?? ''}|${networkId ?? ''}`;
    const entry = known.get(key);
    if (entry) {
      entry.uplinks += uplinks;
      if (at > entry.lastHeardAt.getTime()) entry.lastHeardAt = new Date(at);
      return;
    }
    if (known.size >= PER_ACCOUNT) {
      let oldest: [string, UnknownGateway] | undefined;
      for (const e of known) if (!oldest || e[1].lastHeardAt < oldest[1].lastHeardAt) oldest = e;
      known.delete(oldest![0]);
    }
    known.set(key, { eui, networkId, lastHeardAt: new Date(at), uplinks });
  }

  /** Newest first; `registered` drops those that have been added since (by EUI or id). */
  list(accountId: string, registered: (g: UnknownGateway) => boolean): UnknownGateway[] {
    const known = this.byAccount.get(accountId);
    if (!known) return [];
    for (const [key, g] of known) if (registered(g)) known.delete(key);
    return [...known.values()].sort((a, b) => b.lastHeardAt.getTime() - a.lastHeardAt.getTime());
  }
}
