interface TreeAccount {
  id: string;
  parentId: string | null;
  title: string;
}

/**
 * Accounts depth first (each parent before its children, siblings by title) with their depth
 * below the topmost reachable account; one whose parent is out of reach starts a new root.
 */
export function treeOrder<T extends TreeAccount>(
  accounts: readonly T[],
): Array<{ account: T; depth: number }> {
  const ids = new Set(accounts.map((a) => a.id));
  const children = new Map<string | null, T[]>();
  for (const account of accounts) {
    const key = account.parentId && ids.has(account.parentId) ? account.parentId : null;
    children.set(key, [...(children.get(key) ?? []), account]);
  }
  const out: Array<{ account: T; depth: number }> = [];
  const visit = (parent: string | null, depth: number) => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => a.title.localeCompare(b.title));
    for (const account of list) {
      out.push({ account, depth });
      visit(account.id, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}
