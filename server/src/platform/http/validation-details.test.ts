import { Type, type TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compileValidator } from './validation.js';
import { validationDetails, validationMessage, type SchemaError } from './validation-details.js';

/** The details and message the error handler makes of what the route validator finds in `body`. */
function refusal(schema: TSchema, body: unknown) {
  const validate = compileValidator({ schema, httpPart: 'body', method: 'POST', url: '/' }) as ((
    data: unknown,
  ) => boolean) & { errors?: SchemaError[] };
  expect(validate(body)).toBe(false);
  const details = validationDetails(validate.errors ?? [], 'body');
  return { details, message: validationMessage(details, 'body') };
}

const Rule = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 5 }),
  mode: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('any')])),
  note: Type.Optional(Type.Union([Type.String({ maxLength: 3 }), Type.Null()])),
  label: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  limits: Type.Optional(Type.Array(Type.Number({ maximum: 100 }), { minItems: 1 })),
  trigger: Type.Optional(
    Type.Union([
      Type.Object({ type: Type.Literal('event'), conditions: Type.Array(Type.String(), { minItems: 1 }) }),
      Type.Object({
        type: Type.Literal('time'),
        schedule: Type.Object({ intervalSeconds: Type.Integer({ minimum: 1 }) }),
      }),
    ]),
  ),
});

describe('validation details', () => {
  it('name the keyword and word the problem', () => {
    expect(refusal(Rule, { title: '' })).toEqual({
      details: [
        {
          location: 'body',
          path: '/title',
          keyword: 'minLength',
          message: 'must not be empty',
          params: { limit: 1 },
        },
      ],
      message: 'Invalid body: title must not be empty',
    });
    expect(refusal(Rule, { title: 'x', limits: [1, 101] }).message).toBe(
      'Invalid body: limits[1] must be at most 100',
    );
    expect(refusal(Rule, { title: 'x', limits: [] }).details[0]).toMatchObject({ keyword: 'minItems' });
  });

  it('put a missing property at its own path', () => {
    expect(refusal(Rule, {})).toEqual({
      details: [
        {
          location: 'body',
          path: '/title',
          keyword: 'required',
          message: 'is required',
          params: { missingProperty: 'title' },
        },
      ],
      message: 'Invalid body: title is required',
    });
  });

  it('fold a choice and its branches into one detail', () => {
    expect(refusal(Rule, { title: 'x', mode: 'some' }).details).toEqual([
      expect.objectContaining({ path: '/mode', keyword: 'enum', params: { allowedValues: ['all', 'any'] } }),
    ]);
    expect(refusal(Rule, { title: 'x', mode: 'some' }).message).toBe(
      'Invalid body: mode must be one of: all, any',
    );
    expect(refusal(Rule, { title: 'x', label: 5 }).details).toEqual([
      expect.objectContaining({ path: '/label', keyword: 'type', message: 'must be text or null' }),
    ]);
    // A nullable field reports its own limit, not "must be null".
    expect(refusal(Rule, { title: 'x', note: 'long' }).details).toEqual([
      expect.objectContaining({
        path: '/note',
        keyword: 'maxLength',
        message: 'must have at most 3 characters',
      }),
    ]);
  });

  it('report the branch that matches the value furthest, at the field it names', () => {
    const time = { type: 'time', schedule: { intervalSeconds: null } };
    expect(refusal(Rule, { title: 'x', trigger: time }).details).toEqual([
      expect.objectContaining({
        path: '/trigger/schedule/intervalSeconds',
        keyword: 'type',
        message: 'must be an integer',
      }),
    ]);
    expect(refusal(Rule, { title: 'x', trigger: { type: 'event', conditions: [] } }).details).toEqual([
      expect.objectContaining({ path: '/trigger/conditions', keyword: 'minItems' }),
    ]);
    // Both branches find their properties; the event branch fails at its discriminator only.
    const both = { type: 'time', conditions: ['a'], schedule: { intervalSeconds: 0 } };
    expect(refusal(Rule, { title: 'x', trigger: both }).details).toEqual([
      expect.objectContaining({ path: '/trigger/schedule/intervalSeconds', message: 'must be at least 1' }),
    ]);
  });
});
