import type {
  AggregateExpr,
  AggregateFunction,
  BucketExpr,
  ColumnName,
  ColumnRef,
  CompareOp,
  Condition,
  Duration,
  GroupItem,
  Literal,
  OrderItem,
  PropertyRef,
  Query,
  SelectExpr,
  SelectItem,
  StringLiteral,
  ValueExpr,
} from './query.ast.js';
import { querySyntaxError } from './query.errors.js';
import { TokenCursor } from './query.tokens.js';

/** Bounds that keep a hostile query cheap to parse: nesting is recursion depth. */
export const PARSE_LIMITS = { maxDepth: 40, maxListItems: 1000, maxSelectItems: 64 } as const;

const RESERVED = new Set(
  'SELECT FROM WHERE GROUP BY ORDER LIMIT AS AND OR NOT IN LIKE ILIKE IS NULL BETWEEN ASC DESC UNDER CONTAINS TRUE FALSE'.split(
    ' ',
  ),
);
const AGGREGATES: Record<string, AggregateFunction> = {
  mean: 'mean',
  avg: 'mean',
  min: 'min',
  max: 'max',
  sum: 'sum',
  count: 'count',
  first: 'first',
  last: 'last',
};
const STATE_FIELDS: Record<string, ColumnName> = {
  id: 'state.id',
  key: 'state.key',
  title: 'state.title',
  unit: 'state.unit',
};
const TWIN_FIELDS: Record<string, ColumnName> = {
  id: 'twin.id',
  title: 'twin.title',
  referenceid: 'twin.referenceId',
  hierarchy: 'twin.hierarchy',
};
const COMPARE_OPS: Record<string, CompareOp> = {
  '=': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** Parses query text into the syntax tree, or throws QUERY_SYNTAX_ERROR with position and expectation. */
export function parseQuery(text: string): Query {
  return new Parser(text).query();
}

class Parser extends TokenCursor {
  private depth = 0;
  private readonly aliases = new Set<string>();

  query(): Query {
    this.expectKeyword('SELECT');
    const selectPos = this.peek().pos;
    const select = this.acceptPunct('*') ? ('star' as const) : this.selectList();
    if (this.acceptKeyword('FROM')) {
      const source = this.peek();
      if (source.kind !== 'ident' || source.text.toLowerCase() !== 'points')
        throw this.unexpected(['points']);
      this.next();
    }
    const where = this.acceptKeyword('WHERE') ? this.condition() : null;
    let groupBy: GroupItem[] | null = null;
    if (this.acceptKeyword('GROUP')) {
      this.expectKeyword('BY');
      groupBy = this.list(() => this.groupItem());
    }
    let orderBy = this.acceptKeyword('ORDER') ? this.orderBy() : null;
    let limit: Query['limit'] = null;
    if (this.acceptKeyword('LIMIT')) {
      const token = this.peek();
      if (token.kind !== 'number' || !Number.isInteger(token.number)) throw this.unexpected(['integer']);
      this.next();
      limit = { value: token.number!, pos: token.pos };
    }
    // The spec allows ORDER BY as the last element, after LIMIT; it still sorts before limiting.
    if (!orderBy && limit && this.acceptKeyword('ORDER')) orderBy = this.orderBy();
    if (this.peek().kind !== 'eof') {
      const expected = [...(orderBy ? [] : ['ORDER BY']), ...(limit ? [] : ['LIMIT'])];
      if (!where && !groupBy && !orderBy && !limit) expected.unshift('WHERE', 'GROUP BY', ',');
      throw this.unexpected([...expected, 'end of query']);
    }
    return { select, selectPos, where, groupBy, orderBy, limit };
  }

  private selectList(): SelectItem[] {
    const items = this.list(() => {
      const pos = this.peek().pos;
      const expr = this.selectExpr();
      let alias: string | null = null;
      if (this.acceptKeyword('AS')) alias = this.name('alias');
      if (alias) this.aliases.add(alias);
      return { expr, alias, pos };
    });
    if (items.length > PARSE_LIMITS.maxSelectItems)
      throw querySyntaxError(this.text, items[PARSE_LIMITS.maxSelectItems]!.pos, 'Too many select items');
    return items;
  }

  private selectExpr(): SelectExpr {
    const token = this.peek();
    const agg = token.kind === 'ident' ? AGGREGATES[token.text.toLowerCase()] : undefined;
    if (agg && this.peek(1).text === '(') return this.aggregate(agg);
    return this.valueExpr();
  }

  private aggregate(fn: AggregateFunction): AggregateExpr {
    const pos = this.next().pos;
    this.expectPunct('(');
    const token = this.peek();
    let arg: AggregateExpr['arg'];
    if (token.text === '*' && token.kind === 'punct') arg = '*';
    else if (token.kind === 'ident' && ['value', 'text'].includes(token.text.toLowerCase()))
      arg = token.text.toLowerCase() as 'value' | 'text';
    else throw this.unexpected(fn === 'count' ? ['value', 'text', '*'] : ['value', 'text']);
    this.next();
    this.expectPunct(')');
    return { kind: 'aggregate', fn, arg, pos };
  }

  private valueExpr(): ValueExpr {
    const token = this.peek();
    if (token.kind === 'ident' && token.text.toLowerCase() === 'bucket' && this.peek(1).text === '(')
      return this.bucket();
    return this.operand();
  }

  private bucket(): BucketExpr {
    const pos = this.next().pos;
    this.expectPunct('(');
    const width = this.duration();
    let timeZone: string | null = null;
    if (this.acceptPunct(',')) timeZone = this.string('time zone name').value;
    this.expectPunct(')');
    return { kind: 'bucket', width, timeZone, pos };
  }

  private operand(): ColumnRef | PropertyRef {
    const token = this.peek();
    const word = token.kind === 'ident' ? token.text.toLowerCase() : '';
    if (word === 'time' || word === 'value' || word === 'text') {
      this.next();
      return { kind: 'column', name: word, pos: token.pos };
    }
    if (word === 'state' || word === 'twin') {
      this.next();
      this.expectPunct('.');
      const fields = word === 'state' ? STATE_FIELDS : TWIN_FIELDS;
      const field = this.peek();
      const name = field.kind === 'ident' ? fields[field.text.toLowerCase()] : undefined;
      if (!name) throw this.unexpected(Object.values(fields).map((f) => f.split('.')[1]!));
      this.next();
      return { kind: 'column', name, pos: token.pos };
    }
    if (word === 'property') {
      this.next();
      this.expectPunct('.');
      return { kind: 'property', name: this.name('property name', false), pos: token.pos };
    }
    throw this.unexpected(['a column (time, value, text, state.…, twin.…, property.…)']);
  }

  private groupItem(): GroupItem {
    const pos = this.peek().pos;
    const alias = this.aliasRef();
    return { expr: alias ?? this.valueExpr(), pos };
  }

  private orderBy(): OrderItem[] {
    this.expectKeyword('BY');
    return this.list(() => {
      const pos = this.peek().pos;
      const expr = this.aliasRef() ?? this.selectExpr();
      const direction = this.acceptKeyword('DESC') ? 'desc' : (this.acceptKeyword('ASC'), 'asc');
      return { expr, direction, pos };
    });
  }

  /** A bare name that is one of the select aliases (aliases win over column names, as in SQL). */
  private aliasRef(): { kind: 'alias'; name: string; pos: number } | null {
    const token = this.peek();
    const bare = (token.kind === 'ident' || token.kind === 'quotedIdent') && this.peek(1).text !== '.';
    if (!bare || !this.aliases.has(token.text) || this.peek(1).text === '(') return null;
    this.next();
    return { kind: 'alias', name: token.text, pos: token.pos };
  }

  private condition(): Condition {
    let left = this.andCondition();
    while (this.peekKeyword('OR')) {
      const pos = this.next().pos;
      left = { kind: 'or', left, right: this.andCondition(), pos };
    }
    return left;
  }

  private andCondition(): Condition {
    let left = this.notCondition();
    while (this.peekKeyword('AND')) {
      const pos = this.next().pos;
      left = { kind: 'and', left, right: this.notCondition(), pos };
    }
    return left;
  }

  private notCondition(): Condition {
    const token = this.peek();
    if (++this.depth > PARSE_LIMITS.maxDepth)
      throw querySyntaxError(this.text, token.pos, `Conditions nest deeper than ${PARSE_LIMITS.maxDepth}`);
    try {
      if (this.acceptKeyword('NOT')) return { kind: 'not', operand: this.notCondition(), pos: token.pos };
      if (this.acceptPunct('(')) {
        const inner = this.condition();
        this.expectPunct(')');
        return inner;
      }
      return this.predicate();
    } finally {
      this.depth--;
    }
  }

  private predicate(): Condition {
    const token = this.peek();
    if (token.kind === 'ident' && token.text.toLowerCase() === 'twin' && this.peek(1).text !== '.') {
      this.next();
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('UNDER');
      const under: Condition = { kind: 'under', twinId: this.string('twin id'), pos: token.pos };
      return negated ? { kind: 'not', operand: under, pos: token.pos } : under;
    }
    if (
      token.kind === 'ident' &&
      token.text.toLowerCase() === 'twin' &&
      this.peek(2).kind === 'ident' &&
      this.peek(2).text.toLowerCase() === 'tags'
    ) {
      this.next();
      this.next();
      this.next();
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('CONTAINS');
      const has: Condition = { kind: 'hasTag', tag: this.string('tag'), pos: token.pos };
      return negated ? { kind: 'not', operand: has, pos: token.pos } : has;
    }
    const target = this.operand();
    const pos = target.pos;
    const op = this.peek();
    if (op.kind === 'punct' && COMPARE_OPS[op.text]) {
      this.next();
      return { kind: 'compare', target, op: COMPARE_OPS[op.text]!, value: this.literal(), pos };
    }
    if (this.acceptKeyword('IS')) {
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('NULL');
      const isNull: Condition = { kind: 'isNull', target, pos };
      return negated ? { kind: 'not', operand: isNull, pos } : isNull;
    }
    const negated = this.acceptKeyword('NOT');
    let inner: Condition;
    if (this.acceptKeyword('IN')) {
      this.expectPunct('(');
      const values = this.list(() => this.literal());
      if (values.length > PARSE_LIMITS.maxListItems)
        throw querySyntaxError(
          this.text,
          pos,
          `An IN list holds at most ${PARSE_LIMITS.maxListItems} values`,
        );
      this.expectPunct(')');
      inner = { kind: 'in', target, values, pos };
    } else if (this.acceptKeyword('BETWEEN')) {
      const low = this.literal();
      this.expectKeyword('AND');
      const high = this.literal();
      inner = {
        kind: 'and',
        left: { kind: 'compare', target, op: '>=', value: low, pos },
        right: { kind: 'compare', target, op: '<=', value: high, pos },
        pos,
      };
    } else if (this.peekKeyword('LIKE') || this.peekKeyword('ILIKE')) {
      const caseInsensitive = this.next().text.toUpperCase() === 'ILIKE';
      inner = { kind: 'like', target, pattern: this.string('pattern'), caseInsensitive, pos };
    } else {
      const ops = negated ? [] : ['=', '!=', '<', '<=', '>', '>=', 'IS', 'NOT'];
      throw this.unexpected([...ops, 'IN', 'BETWEEN', 'LIKE', 'ILIKE']);
    }
    return negated ? { kind: 'not', operand: inner, pos } : inner;
  }

  private literal(): Literal {
    const token = this.peek();
    if (token.kind === 'number') {
      this.next();
      return { kind: 'number', value: token.number!, pos: token.pos };
    }
    if (token.kind === 'punct' && token.text === '-' && this.peek(1).kind === 'number') {
      this.next();
      return { kind: 'number', value: -this.next().number!, pos: token.pos };
    }
    if (this.peekKeyword('TRUE') || this.peekKeyword('FALSE')) {
      this.next();
      return { kind: 'number', value: token.text.toUpperCase() === 'TRUE' ? 1 : 0, pos: token.pos };
    }
    const isNow = token.kind === 'ident' && token.text.toLowerCase() === 'now' && this.peek(1).text === '(';
    if (isNow) {
      this.next();
      this.expectPunct('(');
      this.expectPunct(')');
      return { kind: 'time', base: { type: 'now' }, offsetMs: this.offsets(), pos: token.pos };
    }
    if (token.kind === 'string') {
      this.next();
      const shifted = this.peek().kind === 'punct' && ['+', '-'].includes(this.peek().text);
      if (!shifted) return { kind: 'string', value: token.text, pos: token.pos };
      return {
        kind: 'time',
        base: { type: 'iso', text: token.text },
        offsetMs: this.offsets(),
        pos: token.pos,
      };
    }
    throw this.unexpected(["'text'", 'number', 'TRUE', 'FALSE', 'now()']);
  }

  /** `+ 1h - 30m …` after a time: the signed sum in milliseconds. */
  private offsets(): number {
    let total = 0;
    for (;;) {
      const sign = this.peek();
      if (sign.kind !== 'punct' || (sign.text !== '+' && sign.text !== '-')) return total;
      this.next();
      total += (sign.text === '-' ? -1 : 1) * this.duration().ms;
    }
  }

  private duration(): Duration {
    const token = this.peek();
    if (token.kind !== 'duration') throw this.unexpected(['duration such as 15m, 1h, 30d']);
    this.next();
    return {
      amount: token.number!,
      unit: token.unit!,
      ms: token.number! * UNIT_MS[token.unit!],
      pos: token.pos,
    };
  }

  private string(what: string): StringLiteral {
    const token = this.peek();
    if (token.kind !== 'string') throw this.unexpected([`'${what}'`]);
    this.next();
    return { kind: 'string', value: token.text, pos: token.pos };
  }

  /** An alias or property name: an identifier that is not a keyword, or a "quoted name". */
  private name(what: string, refuseReserved = true): string {
    const token = this.peek();
    if (token.kind === 'quotedIdent') return this.next().text;
    if (token.kind === 'ident' && !(refuseReserved && RESERVED.has(token.text.toUpperCase())))
      return this.next().text;
    throw this.unexpected([what]);
  }

  private list<T>(item: () => T): T[] {
    const items = [item()];
    while (this.acceptPunct(',')) {
      if (items.length > PARSE_LIMITS.maxListItems) throw this.unexpected([')']);
      items.push(item());
    }
    return items;
  }
}
