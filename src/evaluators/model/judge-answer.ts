import { z } from 'zod';

/** The structured answer a judge is asked for: the score's value and the reasoning behind it. */
export function judgeAnswerSchema(dataType: 'numeric' | 'boolean'): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      reasoning: { type: 'string', description: 'Why this value, briefly' },
      value: { type: dataType === 'numeric' ? 'number' : 'boolean', description: 'The score' },
    },
    required: ['reasoning', 'value'],
    additionalProperties: false,
  };
}

export interface JudgeAnswer {
  value: number | boolean;
  reasoning: string;
}

/**
 * Reads a judge's structured answer: JSON text (OpenAI's content) or an object (Anthropic's
 * tool input). Anything else is a malformed answer, answered as a string saying what is wrong.
 */
export function parseJudgeAnswer(raw: unknown, dataType: 'numeric' | 'boolean'): JudgeAnswer | string {
  let answer = raw;
  if (typeof raw === 'string') {
    try {
      answer = JSON.parse(raw);
    } catch {
      return 'the judge answered text that is not JSON';
    }
  }
  const parsed = z.object({ value: dataType === 'numeric' ? z.number().finite() : z.boolean(), reasoning: z.string() }).safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `the judge's answer is malformed: ${issue.path.join('.') || 'answer'} ${issue.message}`;
  }
  return parsed.data;
}
