import { OPERATIONS } from '../../src/operations';
import { generatedBodiesAgainst } from './generated-bodies';

/** The sources' operations under /v1/data (the tool endpoints are in tool-endpoints.test.ts: together, the registry). */
generatedBodiesAgainst(
  'every /v1/data endpoint',
  OPERATIONS.filter((operation) => operation.paths[0].startsWith('/v1/data/')),
);
