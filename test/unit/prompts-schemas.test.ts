import { describe, expect, it } from 'vitest';
import { checkOutputSchema, validateAgainstOutputSchema } from '../../src/prompts/model/output-schema.js';
import { createPromptBody, createVersionBody, promptIdParams, renderBody, updatePromptBody } from '../../src/prompts/model/schemas.js';

const paths = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((i) => i.path.join('.'));

describe('validateAgainstOutputSchema', () => {
  it('names the missing property in the path, and answers a schema that does not compile with its problem', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(validateAgainstOutputSchema(schema, { answer: 'yes' })).toEqual([]);
    expect(validateAgainstOutputSchema(schema, {})).toEqual([{ path: ['answer'], message: "must have required property 'answer'" }]);
    const unresolved = validateAgainstOutputSchema({ $ref: '#/definitions/nowhere' }, {});
    expect(unresolved).toHaveLength(1);
    expect(unresolved[0]!.message).toMatch(/^does not compile/);
  });
});

describe('checkOutputSchema', () => {
  it('accepts draft-07 schemas, and 2019-09 or 2020-12 when named', () => {
    expect(checkOutputSchema({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] })).toEqual([]);
    expect(
      checkOutputSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'number' }] }),
    ).toEqual([]);
    expect(checkOutputSchema({ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' })).toEqual([]);
  });

  it('allows unknown annotation keywords', () => {
    expect(checkOutputSchema({ type: 'string', example: 'x', 'x-hint': true })).toEqual([]);
  });

  it('names the path of what is wrong', () => {
    const problems = checkOutputSchema({ type: 'object', properties: { answer: { type: 'text' } }, required: 'answer' });
    const where = problems.map((p) => p.path.join('.'));
    expect(where).toContain('properties.answer.type');
    expect(where).toContain('required');
  });

  it('refuses an unknown dialect and an unresolvable $ref', () => {
    expect(checkOutputSchema({ $schema: 'https://example.com/mine' })[0]?.path).toEqual(['$schema']);
    expect(checkOutputSchema({ $ref: '#/definitions/missing' })[0]?.message).toContain('does not compile');
  });

  it('lets two schemas share an $id', () => {
    expect(checkOutputSchema({ $id: 'https://example.com/s', type: 'object' })).toEqual([]);
    expect(checkOutputSchema({ $id: 'https://example.com/s', type: 'string' })).toEqual([]);
  });
});

describe('request bodies', () => {
  it('defaults a new prompt to 1.0.0 with empty description and metadata', () => {
    expect(createPromptBody.parse({ name: 'greet', systemPrompt: 'Hi' })).toMatchObject({
      version: '1.0.0',
      description: '',
      metadata: {},
    });
  });

  it('refuses unknown and non-editable fields with their own path', () => {
    expect(paths(createPromptBody.safeParse({ name: 'a', systemPrompt: 'b', isLatest: false }))).toEqual(['isLatest']);
    const r = createVersionBody.safeParse({ newVersion: '1.0.1', changes: { name: 'x', version: '2.0.0', systemPrompt: 'ok' } });
    expect(paths(r).sort()).toEqual(['changes.name', 'changes.version']);
    expect(paths(updatePromptBody.safeParse({ isLatest: true }))).toEqual(['isLatest']);
    expect(paths(createVersionBody.safeParse({ newVersion: '1.0.1', changes: {}, extra: 1 }))).toEqual(['']);
  });

  it('names the path of a bad version and of a bad output schema', () => {
    expect(paths(createVersionBody.safeParse({ newVersion: 'v1.0.0', changes: {} }))).toEqual(['newVersion']);
    expect(paths(createVersionBody.safeParse({ newVersion: '1.0.1' }))).toEqual(['changes']);
    const bad = createVersionBody.safeParse({ newVersion: '1.0.1', changes: { outputSchema: { type: 'nope' } } });
    expect(paths(bad)).toContain('changes.outputSchema.type');
    expect(paths(createPromptBody.safeParse({ name: 'a', systemPrompt: 'b', outputSchema: [] }))).toEqual(['outputSchema']);
  });

  it('takes null to clear optional fields, and a bump kind', () => {
    expect(updatePromptBody.parse({ humanPrompt: null, outputSchema: null })).toEqual({
      humanPrompt: null,
      outputSchema: null,
      bump: 'patch',
    });
    expect(paths(updatePromptBody.safeParse({ bump: 'huge' }))).toEqual(['bump']);
    expect(paths(updatePromptBody.safeParse({ systemPrompt: null }))).toEqual(['systemPrompt']);
  });

  it('takes ids as positive integers of the database range', () => {
    expect(promptIdParams.parse({ id: '42' })).toEqual({ id: 42 });
    for (const id of ['0', '-1', '1.5', 'abc', '1e3', '01', '2147483648', '99999999999']) {
      expect(promptIdParams.safeParse({ id }).success, id).toBe(false);
    }
  });

  it('takes variables as identifiers with scalar values', () => {
    expect(renderBody.parse({})).toEqual({ variables: {} });
    expect(paths(renderBody.safeParse({ variables: { ok: 'x', nested: { a: 1 } } }))).toEqual(['variables.nested']);
    expect(paths(renderBody.safeParse({ variables: { 'not-a-name': 'x' } }))).toEqual(['variables.not-a-name']);
  });
});
