import { OPERATIONS } from '../../src/operations';
import { generatedBodiesAgainst } from './generated-bodies';

/** The tool endpoints (/scrape, /serp, ...): every operation not under /v1/data. */
generatedBodiesAgainst(
  'every tool endpoint',
  OPERATIONS.filter((operation) => !operation.paths[0].startsWith('/v1/data/')),
);
