import { describe, expect, it } from 'vitest';
import { diffJson, diffText, templateVariables } from '../../src/prompts/service/diff.js';

describe('diffText', () => {
  it('answers line hunks with context, and no hunk for equal texts', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 3\n', 'LINE 3\n').replace('line 18\n', 'line 18\nline 18b\n');
    const diff = diffText(before, after);
    expect(diff.changed).toBe(true);
    expect(diff.hunks).toEqual([
      {
        oldStart: 1,
        oldLines: 6,
        newStart: 1,
        newLines: 6,
        lines: [' line 1', ' line 2', '-line 3', '+LINE 3', ' line 4', ' line 5', ' line 6'],
      },
      {
        oldStart: 16,
        oldLines: 5,
        newStart: 16,
        newLines: 6,
        lines: [' line 16', ' line 17', ' line 18', '+line 18b', ' line 19', ' line 20'],
      },
    ]);
    expect(diffText('same', 'same')).toEqual({ changed: false, hunks: [] });
    expect(diffText(null, null)).toEqual({ changed: false, hunks: [] });
    expect(diffText(null, 'new')).toMatchObject({ changed: true, hunks: [{ lines: ['+new', '\\ No newline at end of file'] }] });
  });
});

describe('diffJson', () => {
  it('names added, removed and changed paths as normalized JSONPaths', () => {
    const before = {
      type: 'object',
      properties: { answer: { type: 'string' }, score: { type: 'number' } },
      required: ['answer'],
      "it's": 1,
    };
    const after = {
      type: 'object',
      properties: { answer: { type: 'array' }, reason: { type: 'string' } },
      required: ['answer', 'reason'],
      "it's": 1,
    };
    expect(diffJson(before, after)).toEqual({
      added: [
        { path: "$['properties']['reason']", value: { type: 'string' } },
        { path: "$['required'][1]", value: 'reason' },
      ],
      removed: [{ path: "$['properties']['score']", value: { type: 'number' } }],
      changed: [{ path: "$['properties']['answer']['type']", from: 'string', to: 'array' }],
    });
    expect(diffJson({ "a'b": 1 }, { "a'b": 2 }).changed[0]!.path).toBe("$['a\\'b']");
  });

  it('treats a null side as the whole value added or removed, and a change of kind as a change', () => {
    expect(diffJson(null, { a: 1 })).toEqual({ added: [{ path: '$', value: { a: 1 } }], removed: [], changed: [] });
    expect(diffJson({ a: 1 }, null)).toEqual({ added: [], removed: [{ path: '$', value: { a: 1 } }], changed: [] });
    expect(diffJson(null, null)).toEqual({ added: [], removed: [], changed: [] });
    expect(diffJson({ a: [1] }, { a: { 0: 1 } }).changed).toEqual([{ path: "$['a']", from: [1], to: { 0: 1 } }]);
  });
});

describe('templateVariables', () => {
  it('collects the placeholders of all three templates, sorted, literal braces excluded', () => {
    expect(
      templateVariables({ systemPrompt: 'Hi {name}, {{not}} {company}', humanPrompt: '{question}', rawPrompt: '{name} {extra}' }),
    ).toEqual(['company', 'extra', 'name', 'question']);
  });
});
