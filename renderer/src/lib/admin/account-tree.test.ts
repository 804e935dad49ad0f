import { describe, expect, it } from 'vitest';
import { treeOrder } from './account-tree';

describe('treeOrder', () => {
  it('puts parents before children, siblings by title, orphans as roots', () => {
    const order = treeOrder([
      { id: 'c', parentId: 'root', title: 'Zeta' },
      { id: 'root', parentId: 'above', title: 'Root' },
      { id: 'b', parentId: 'root', title: 'Alpha' },
      { id: 'b1', parentId: 'b', title: 'Hall' },
    ]);
    expect(order.map((o) => `${o.depth}:${o.account.id}`)).toEqual(['0:root', '1:b', '2:b1', '1:c']);
  });
});
