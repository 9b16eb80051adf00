import type { Operation } from './types';

/** Model-answer endpoints A-D: /chatgpt-api-answer, /perplexity-api-answer, /claude-api-answer, /chatgpt-app-answer. */
export const answerOperations: Operation[] = [];
